/**
 * `npm test`'s mocha config (and `npm run test:stress`'s): every test file, the slowest first.
 *
 * Mocha's parallel runner hands the files to its workers in the order given. In alphabetical order a file of a minute
 * can start last and run alone while the other workers sit idle; started first, the slow files overlap and the many
 * quick ones fill the gaps. The list is a hint, slowest first (measured with the whole suite on 2 cores): a file
 * missing here runs after them in alphabetical order, a name here that no longer exists is skipped. Files named on the
 * command line run instead of the whole suite (`npx mocha dist/test/plugins/remind/*.test.js`).
 */
const fs = require('node:fs');
const path = require('node:path');

const SLOWEST_FIRST = [
  'test/plugins/documents/console.test.ts',
  'test/core/access/access-console.test.ts',
  'test/core/whatsapp/wire/close-codes.test.ts',
  'test/plugins/links/links.test.ts',
  'test/core/store/backup-privacy.test.ts',
  'test/app/setup.test.ts',
  'test/core/console/console.test.ts',
  'test/plugins/documents/privacy.test.ts',
  'test/core/store/backup.test.ts',
  'test/docs/plugin-example.test.ts',
  'test/core/plugin/plugin-package.test.ts',
  'test/core/store/data-files.test.ts',
  'test/plugins/documents/hostile.test.ts',
  'test/core/media/untrusted-media.test.ts',
  'test/core/chat/chat-summary.test.ts',
  'test/core/pipeline/bursts.test.ts',
  'test/plugins/imagine/imagine.test.ts',
  'test/plugins/documents/whatsapp.test.ts',
  'test/core/whatsapp/app-chat-data.test.ts',
  'test/core/store/host-store.test.ts',
  'test/core/whatsapp/bounded-downloads.test.ts',
  'test/core/store/privacy.test.ts',
  'test/plugins/controls/controls.test.ts',
  'test/core/store/atomic-write.test.ts',
  'test/core/whatsapp/wire/round4.test.ts',
  'test/core/lifecycle/clean-stop.test.ts',
  'test/core/chat/ai-chat.test.ts',
  'test/core/pipeline/pipeline.test.ts',
  'test/core/lifecycle/instance-lock.test.ts',
  'test/plugins/controls/logs.test.ts',
  'test/core/store/owned-docs.test.ts',
  'test/core/config/accounts.test.ts',
  'test/docs/storage-example.test.ts',
  'test/plugins/mcp/stdio-bound.test.ts',
  'test/core/pipeline/progress-console.test.ts',
  'test/core/webhooks/event-webhooks.test.ts',
  'test/plugins/documents/size.test.ts',
  'test/core/store/set-aside-files.test.ts',
  'test/plugins/checkins/quiet-checkins.test.ts',
  'test/core/whatsapp/read-receipts.test.ts',
  'test/core/plugin/plugin-entry.test.ts',
  'test/core/guard/effect-guard.test.ts',
  'test/app/doctor.test.ts',
  'test/core/plugin/plugin-contract.test.ts',
  'test/core/whatsapp/wire/crabline.test.ts',
  'test/plugins/imagine/bounded-answer.test.ts',
  'test/app/injection-catalogue.test.ts',
];

const ROOT = __dirname;
const compiled = (file) => path.join('dist', file.replace(/\.ts$/, '.js'));
const all = fs
  .readdirSync(path.join(ROOT, 'dist', 'test'), { recursive: true })
  .filter((file) => file.endsWith('.test.js'))
  .map((file) => path.join('dist', 'test', file))
  .sort();
const present = new Set(all);
const first = SLOWEST_FIRST.map(compiled).filter((file) => present.has(file));
const firstSet = new Set(first);
// Files named on the command line replace the suite (mocha adds the config's spec to them otherwise).
const named = process.argv.slice(2).some((arg) => !arg.startsWith('-') && /\.js$/.test(arg) && !/helpers\//.test(arg));

module.exports = {
  ...(named ? {} : { spec: [...first, ...all.filter((file) => !firstSet.has(file))] }),
  timeout: 20000,
  exit: true,
  reporter: 'spec',
  require: ['dist/test/helpers/run-temp.js'],
};
