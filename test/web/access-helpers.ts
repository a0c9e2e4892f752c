/** Who is answered as config.example.json ships it (the test app otherwise opens the bot to everyone). */
export const SHIPPED_RULES = { access: { mode: 'pairing', allow: [], block: [] }, groups: { policy: 'allowlist', commandsWithoutMention: false } };

/**
 * Resolves once `probe` holds (checked as the event loop turns), or fails naming `what`.
 * @example await until(() => gw.chats().length === 1, 'the held message at the model');
 */
export async function until(probe: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
