/**
 * `npm run test:fast`: the in-process tier of the suite, for the inner loop (under a minute on two cores).
 *
 * It runs every test file but the slow ones listed here: the files whose tests start child processes (the console,
 * `npm start`, a CLI, ffmpeg, bubblewrap, poppler, yt-dlp), a browser, or a WhatsApp wire server, and a few heavy
 * in-process ones (the last group: moving a file there is how the tier stays under a minute). The fast tier
 * checks itself: a test in it that starts a child process fails, naming the command
 * (test/helpers/in-process-only.ts); list its file here. `npm test` runs everything, these included.
 */
const SLOW = [
  // A browser (headless Chromium).
  'test/web/*.browser.test.ts',
  // WhatsApp on the wire: npm start's own process against a WhatsApp Web server.
  'test/core/whatsapp/wire/**',
  // The console and the CLIs, spawned.
  'test/core/console/console.test.ts',
  'test/core/console/console-terminal.test.ts',
  'test/core/pipeline/progress-console.test.ts',
  'test/app/setup.test.ts',
  'test/app/doctor.test.ts',
  'test/app/testing-kit.test.ts',
  'test/core/plugin/plugin-entry.test.ts',
  'test/core/plugin/discovery.test.ts',
  'test/plugins/mcp/**',
  'test/core/config/config.test.ts',
  'test/core/lifecycle/clean-stop.test.ts',
  'test/core/lifecycle/instance-lock.test.ts',
  'test/core/pipeline/bursts.test.ts',
  'test/core/plugin/plugin-package.test.ts',
  'test/core/plugin/packed-plugin-dependency.test.ts',
  'test/deploy/**',
  'test/docs/plugin-example.test.ts',
  'test/docs/storage-example.test.ts',
  'test/plugins/controls/logs.test.ts',
  'test/app/token-command.test.ts',
  'test/app/start-modules.test.ts',
  'test/app/plugin-first-use.test.ts',
  'test/web/automation/mcp-server.test.ts',
  // Processes killed mid-write, backups and restores through their CLI, a full disk.
  'test/core/store/atomic-write.test.ts',
  'test/core/store/backup-privacy.test.ts',
  'test/core/store/backup.test.ts',
  'test/core/store/disk-full.test.ts',
  'test/core/store/history-log-folding.test.ts',
  'test/core/store/history-log.test.ts',
  'test/plugins/recall/recall-batched-writes.test.ts',
  // Real media tools (ffmpeg, poppler, yt-dlp) and the bubblewrap jail.
  'test/app/testing-whatsapp.test.ts',
  'test/core/jail/**',
  'test/app/injection-catalogue.test.ts',
  'test/core/chat/provenance.test.ts',
  'test/core/whatsapp/bounded-downloads.test.ts',
  'test/plugins/links/links.test.ts',
  'test/core/media/untrusted-media.test.ts',
  'test/core/media/default-options.test.ts',
  'test/core/store/voice-unsaved.test.ts',
  'test/core/whatsapp/resilience.test.ts',
  'test/core/whatsapp/chat-move.test.ts',
  'test/core/whatsapp/creds-backup.test.ts',
  'test/core/whatsapp/transport.test.ts',
  'test/core/whatsapp/video-preview.test.ts',
  'test/plugins/documents/**',
  'test/plugins/imagine/imagine.test.ts',
  'test/plugins/mp3/**',
  'test/plugins/sticker/**',
  'test/plugins/vision/**',
  'test/plugins/voice/**',
  'test/plugins/checkins/no-reply-voice.test.ts',
  'test/plugins/catchup/watched-voice.test.ts',
  'test/plugins/workspace/**',
  // In-process but heavy (a bot or more per test, many turns each, or reminders waiting on the real clock): together
  // they would take the tier past a minute.
  'test/core/access/access-console.test.ts',
  'test/plugins/polls/console.test.ts',
  'test/plugins/remind/console.test.ts',
  'test/plugins/remind/tasks-console.test.ts',
  'test/core/chat/chat-summary.test.ts',
  'test/core/chat/ai-chat.test.ts',
  'test/core/chat/prompt-as.test.ts',
  'test/core/plugin/plugin-contract.test.ts',
  'test/app/one-validator.test.ts',
  'test/plugins/search/search.test.ts',
  'test/plugins/controls/controls.test.ts',
  'test/plugins/remind/remind-data.test.ts',
  'test/core/whatsapp/app-chat-data.test.ts',
  'test/web/login-flood.test.ts',
  'test/core/whatsapp/own-lid.test.ts',
  'test/core/whatsapp/not-a-question.test.ts',
  'test/core/whatsapp/answer-pacing.test.ts',
  'test/core/store/data-files.test.ts',
  'test/core/config/accounts.test.ts',
  // 500 random sequences through whole bots (guard-property.test.ts keeps 10,000 through the guard itself here).
  'test/core/guard/guard-property-kit.test.ts',
  'test/core/pipeline/progress-whatsapp.test.ts',
];

module.exports = {
  spec: ['dist/test/**/*.test.js'],
  ignore: SLOW.map((glob) => `dist/${glob.replace(/\.ts$/, '.js')}`),
  parallel: true,
  jobs: 3,
  timeout: 20000,
  exit: true,
  reporter: 'dot',
  require: ['dist/test/helpers/run-temp.js', 'dist/test/helpers/in-process-only.js'],
};
