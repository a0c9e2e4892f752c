// Layering rules, checked by `npm test` (CI runs exactly that) on the compiled JavaScript in dist/ (what runs;
// dependency-cruiser cannot read TypeScript 7 sources, and type-only imports vanish when compiled).
// Each rule says in words what it keeps true.
module.exports = {
  forbidden: [
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
      comment: 'A plugin imports only core/index.ts from the core (as a plugin in its own package imports wa-assistant-bot/plugin).',
      from: { path: '^dist/plugins/' },
      to: { path: '^dist/core/', pathNot: '^dist/core/index\\.js$' },
    },
    {
      name: 'plugin-imports-no-web-or-app',
      severity: 'error',
      comment: 'A plugin never imports web/ or app/: it offers routes and static files through its host instead.',
      // The one exception until the web server serves plugins' static files on SITE_PORT (host service in the works):
      // the workspace's site server reuses web/'s Host guard. Nothing else in the workspace plugin may import web/.
      from: { path: '^dist/plugins/', pathNot: '^dist/plugins/workspace/site\\.js$' },
      to: { path: '^dist/(web|app)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^node_modules/|\\.map$)' },
  },
};
