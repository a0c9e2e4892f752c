// The fake audio provider is part of the public test kit (wa-assistant-bot/testing: FakeAudio, the `audio` option of
// startTestBot); the suite's imports keep working through this path under its old name.
export { FakeAudio as FakeAudioProvider, audioFailures, parseMultipart, speechAudio, type SpeechRequest, type TranscriptionUpload } from '../../app/testing/fake-audio.js';
