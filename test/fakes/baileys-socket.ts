// The fake Baileys socket is part of the public test kit (wa-assistant-bot/testing/whatsapp); the suite's imports
// keep working through this path.
export * from '../../app/testing/fake-baileys-socket.js';
