// Layering rules, checked by `npm test` (CI runs exactly that) on the compiled JavaScript in dist/ (what runs;
// dependency-cruiser cannot read TypeScript 7 sources, and type-only imports vanish when compiled).
// Each rule says in words what it keeps true.
module.exports = {
  forbidden: [
    {
      name: 'kernel-imports-no-adapter',
      severity: 'error',
      comment: 'The kernel (core/kernel/) knows no transport: WhatsApp, the console and the memory transport plug into its port.',
      from: { path: '^dist/core/kernel/' },
      to: { path: '^dist/core/adapters/' },
    },
    {
      name: 'services-import-no-adapter',
      severity: 'error',
      comment: 'The services (core/services/: providers, jail, media, stores, sending …) know no transport either.',
      from: { path: '^dist/core/services/' },
      to: { path: '^dist/core/adapters/' },
    },
    {
      name: 'services-reach-the-kernel-only-through-its-port',
      severity: 'error',
      comment: 'A service may know the message and transport types (core/kernel/port/), nothing else of the kernel: the kernel uses services, not the other way round.',
      from: { path: '^dist/core/services/' },
      to: { path: '^dist/core/kernel/', pathNot: '^dist/core/kernel/port/' },
    },
    {
      name: 'adapters-reach-the-kernel-only-through-its-port',
      severity: 'error',
      comment: 'An adapter (core/adapters/) reaches the kernel only through core/kernel/port/ (the transport and message types, ids).',
      from: { path: '^dist/core/adapters/' },
      to: { path: '^dist/core/kernel/', pathNot: '^dist/core/kernel/port/' },
    },
    {
      name: 'adapters-import-no-other-adapter',
      severity: 'error',
      comment: 'Each adapter stands alone: WhatsApp imports nothing of the console or the memory transport, and so on.',
      from: { path: '^dist/core/adapters/([^/]+)/' },
      to: { path: '^dist/core/adapters/', pathNot: '^dist/core/adapters/$1/' },
    },
    {
      name: 'whatsapp-adapter-reads-no-config-and-no-store-schema',
      severity: 'error',
      comment: 'The WhatsApp adapter reads no config file or environment and no store schema: the composition root (app/) hands it plain options and callbacks, and the adapter owns the schemas of its own data files (whatsapp-data-schemas.ts).',
      from: { path: '^dist/core/adapters/whatsapp/' },
      to: { path: '^dist/core/services/(config/|store/schemas)' },
    },
    {
      name: 'core-knows-no-plugin',
      severity: 'error',
      comment: 'The core imports nothing from plugins/: plugins are found at start and reach the core through its public entry.',
      from: { path: '^dist/core/' },
      to: { path: '^dist/plugins/' },
    },
    {
      name: 'core-knows-no-web',
      severity: 'error',
      comment: 'The core imports nothing from web/ or app/: the web server and the entry points sit on top of the core.',
      from: { path: '^dist/core/' },
      to: { path: '^dist/(web|app)/' },
    },
    {
      name: 'nothing-that-ships-imports-the-tests',
      severity: 'error',
      comment: 'app/, core/, plugins/ and web/ import nothing from test/: the test kit (app/testing, with its fake Baileys socket) is used by plugin authors without the repository\'s tests.',
      from: { path: '^dist/(app|core|plugins|web)/' },
      to: { path: '^dist/test/' },
    },
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'No import cycles anywhere: every module can be understood (and loaded) after the ones it imports.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'plugin-imports-no-other-plugin',
      severity: 'error',
      comment: 'A plugin never imports another plugin: shared things come from the host the core hands it.',
      from: { path: '^dist/plugins/([^/]+)/' },
      to: { path: '^dist/plugins/', pathNot: '^dist/plugins/$1/' },
    },
    {
      name: 'plugin-imports-only-the-public-entry',
      severity: 'error',
      comment: 'A plugin imports only the public entries from the core: core/index.ts, core/media.ts and core/storage.ts (as a plugin in its own package imports wa-assistant-bot/plugin, /media, /storage).',
      from: { path: '^dist/plugins/' },
      to: { path: '^dist/core/', pathNot: '^dist/core/(index|media|storage)\\.js$' },
    },
    {
      name: 'core-plugins-use-only-the-public-entry',
      comment: "The core plugins (.help, .status, the fallback to the model) are built with the API third parties get: besides each other's index they import only core/index.ts.",
      severity: 'error',
      from: { path: '^dist/core/kernel/core-plugins/[^/]+\\.js$', pathNot: '^dist/core/kernel/core-plugins/index\\.js$' },
      to: { path: '^dist/', pathNot: ['^dist/core/index\\.js$', '^dist/core/kernel/core-plugins/'] },
    },
    {
      name: 'plugin-imports-no-web-or-app',
      severity: 'error',
      comment: 'A plugin never imports web/ or app/: it offers routes and static files through its host instead.',
      from: { path: '^dist/plugins/' },
      to: { path: '^dist/(web|app)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^node_modules/|\\.map$)' },
  },
};
