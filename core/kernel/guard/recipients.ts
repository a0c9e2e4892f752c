/*
 * The one rule for who may receive a message the bot STARTS (not a reply in the chat that asked): an owner, a chat
 * that wrote to the bot and is let in now, or a recipient the owner approved (the outbound list, apart from who may
 * write to the bot). Every bot-started send (host.send, owner notices, held actions, errands) asks it first.
 */

export interface RecipientFacts {
  /** An owner's private chat with the bot (the console's too). */
  ownerChat(chatId: string): boolean;
  /** The access rules let this chat in now (a private chat's person, a group the bot takes part in). */
  letIn(chatId: string): boolean;
  /** Someone other than the bot wrote in this chat (its history holds a message of theirs). */
  wrote(chatId: string): Promise<boolean>;
  /** The owner approved this recipient (an errand they said 👍 to, a send they made). */
  approved(chatId: string): Promise<boolean>;
}

/** Why the bot may not start a message to `chatId`, or undefined when it may. */
export async function refusalFor(chatId: string, facts: RecipientFacts): Promise<string | undefined> {
  if (facts.ownerChat(chatId)) return undefined;
  if (await facts.approved(chatId)) return undefined;
  if (facts.letIn(chatId) && (await facts.wrote(chatId))) return undefined;
  return 'the bot writes first only to an owner, a chat that wrote to it and is let in, or a recipient the owner approved';
}

