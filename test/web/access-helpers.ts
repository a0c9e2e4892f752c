/** Who is answered as config.example.json ships it (the test app otherwise opens the bot to everyone). */
export const SHIPPED_RULES = { access: { mode: 'pairing', allow: [], block: [] }, groups: { policy: 'allowlist', commandsWithoutMention: false } };
