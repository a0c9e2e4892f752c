// Linking the real app over the fake Baileys socket is part of the public test kit (wa-assistant-bot/testing/whatsapp).
export { linkBot as startLinkedBot, type LinkedBot } from '../../app/testing/whatsapp.js';
