/**
 * `npm test`'s mocha config (and `npm run test:stress`'s): every test file, the slowest first.
 *
 * Mocha's parallel runner hands the files to its workers in the order given. In alphabetical order a file of a minute
 * can start last and run alone while the other workers sit idle; started first, the slow files overlap and the many
 * quick ones fill the gaps. The list is a hint, slowest first (each file's wall time alone on the loaded 2-core machine,
 * 2026-11-29; the files of 9 s and more, then the earlier list's quicker tail): a file missing here runs after them in
 * alphabetical order, a name here that no longer exists is skipped. Files named on the
 * command line run instead of the whole suite (`npx mocha dist/test/plugins/remind/*.test.js`).
 */
const fs = require('node:fs');
const path = require('node:path');

const SLOWEST_FIRST = [
  'test/plugins/mp3/mp3.test.ts',
  'test/plugins/workspace/jail.test.ts',
  'test/plugins/mcp/mcp.test.ts',
  'test/web/dashboard.browser.test.ts',
  'test/plugins/controls/logs.test.ts',
  'test/core/guard/guard-property-kit.test.ts',
  'test/plugins/voice/voice.test.ts',
  'test/plugins/documents/console.test.ts',
  'test/core/whatsapp/wire/crabline.test.ts',
  'test/plugins/mp3/end-to-end.test.ts',
  'test/plugins/voice/voice-replies.test.ts',
  'test/core/pipeline/progress-whatsapp.test.ts',
  'test/web/cockpit.browser.test.ts',
  'test/plugins/documents/privacy.test.ts',
  'test/plugins/sticker/sticker.test.ts',
  'test/core/providers/bounded-answers.test.ts',
  'test/core/whatsapp/video-preview.test.ts',
  'test/plugins/workspace/sandbox.test.ts',
  'test/plugins/vision/vision.test.ts',
  'test/core/console/console-terminal.test.ts',
  'test/plugins/voice/opus-length.test.ts',
  'test/plugins/vision/quoted-media.test.ts',
  'test/core/media/untrusted-media.test.ts',
  'test/core/whatsapp/wire/close-codes.test.ts',
  'test/plugins/sticker/console.test.ts',
  'test/plugins/documents/hostile.test.ts',
  'test/app/setup.test.ts',
  'test/plugins/recall/recall-batched-writes.test.ts',
  'test/core/config/config.test.ts',
  'test/plugins/voice/quoted-whatsapp.test.ts',
  'test/core/whatsapp/wire/round4.test.ts',
  'test/core/whatsapp/transport.test.ts',
  'test/core/whatsapp/wire/bot-round4.test.ts',
  'test/docs/plugin-example.test.ts',
  'test/web/dashboard-forms.test.ts',
  'test/plugins/links/links.test.ts',
  'test/plugins/voice/quoted-voice.test.ts',
  'test/core/pipeline/progress-console.test.ts',
  'test/core/plugin/plugin-package.test.ts',
  'test/core/whatsapp/chat-move.test.ts',
  'test/core/console/console.test.ts',
  'test/plugins/catchup/watched-voice.test.ts',
  'test/core/lifecycle/instance-lock.test.ts',
  'test/core/guard/errand-console.test.ts',
  'test/web/local-api-console.test.ts',
  'test/plugins/vision/console.test.ts',
  'test/core/plugin/discovery.test.ts',
  'test/core/whatsapp/resilience.test.ts',
  'test/plugins/checkins/no-reply-voice.test.ts',
  'test/core/whatsapp/signal-console.test.ts',
  'test/app/doctor.test.ts',
  'test/core/store/data-files.test.ts',
  'test/web/server.test.ts',
  'test/plugins/vision/video-sound.test.ts',
  'test/plugins/workspace/console.test.ts',
  'test/deploy/deploy.test.ts',
  'test/plugins/remind/remind-data.test.ts',
  'test/web/access-dashboard.test.ts',
  'test/plugins/imagine/imagine.test.ts',
  'test/web/automation/mcp-server.test.ts',
  'test/plugins/share/share.test.ts',
  'test/plugins/documents/whatsapp.test.ts',
  'test/plugins/workspace/chat.test.ts',
  'test/web/access.browser.test.ts',
  'test/core/whatsapp/app-chat-data.test.ts',
  'test/web/local-api.test.ts',
  'test/core/store/host-store.test.ts',
  'test/core/whatsapp/bounded-downloads.test.ts',
  'test/core/store/privacy.test.ts',
  'test/plugins/controls/controls.test.ts',
  'test/web/automation/hooks.test.ts',
  'test/core/store/atomic-write.test.ts',
  'test/web/login-flood.test.ts',
  'test/plugins/voice/quoted-any-turn.test.ts',
  'test/plugins/voice/playlist-attack.test.ts',
  'test/plugins/remind/remind.test.ts',
  'test/web/operator.test.ts',
  'test/plugins/recall/recall-ranking.test.ts',
  'test/core/lifecycle/clean-stop.test.ts',
  'test/core/pipeline/bursts.test.ts',
  'test/core/chat/ai-chat.test.ts',
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
