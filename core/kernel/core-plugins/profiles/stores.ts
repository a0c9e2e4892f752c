import { Store, Type, type Static } from '../../../index.js';

/*
 * What the `profiles` core plugin keeps, declared (so backups, `.mydata`, deletes and chat moves follow): each chat's
 * profile, the money spent per month (overall, per chat, per person, per model), and the record of each chat's
 * recent answers for `.why`.
 */

export const ANSWER_LENGTHS = ['short', 'normal', 'long'] as const;
export type AnswerLength = (typeof ANSWER_LENGTHS)[number];

const Profile = Type.Object({
  /** The chat's model (checked against the gateway's list when set). */
  model: Type.Optional(Type.String({ maxLength: 200 })),
  /** Tools or plugins allowed here, by name; absent: every tool the enabled plugins offer. */
  tools: Type.Optional(Type.Array(Type.String({ maxLength: 80 }), { maxItems: 100 })),
  answerLength: Type.Optional(Type.Union(ANSWER_LENGTHS.map((l) => Type.Literal(l)))),
  /** Money this chat may spend per month (the config's currency); 0: no cap of its own. */
  monthlyCap: Type.Optional(Type.Number({ minimum: 0 })),
  /** Who set it last (an owner's id, `console`, `dashboard`) and when. */
  by: Type.String(),
  at: Type.Integer(),
});
export type Profile = Static<typeof Profile>;

/** The key of the default profile (for chats without one of their own) in `chats`. */
export const DEFAULT_PROFILE = 'default';

/** Every chat's profile, and the default under `default`. A private chat's profile is its person's (`.mydata`). */
export const CHAT_PROFILES = Store.doc('chat-profiles', Type.Object({ chats: Type.Record(Type.String(), Profile) }), () => ({ chats: {} }), {
  title: 'chat profiles',
  people: { byId: (doc) => doc.chats },
});

const Tally = Type.Object({ cost: Type.Number(), turns: Type.Integer(), prompt: Type.Integer(), cached: Type.Integer(), completion: Type.Integer(), unpriced: Type.Integer() });
export type Tally = Static<typeof Tally>;
export const emptyTally = (): Tally => ({ cost: 0, turns: 0, prompt: 0, cached: 0, completion: 0, unpriced: 0 });

const Month = Type.Object({ all: Tally, chats: Type.Record(Type.String(), Tally), models: Type.Record(Type.String(), Tally) });
export type MonthSpend = Static<typeof Month>;

/**
 * Money spent, per month (YYYY-MM, UTC): overall, per chat, per model; per person under `people` (their `.mydata`).
 * `warned` names the cap notices already given (so an owner hears of each once a month, restarts included).
 */
export const SPEND = Store.doc(
  'spend',
  Type.Object({ months: Type.Record(Type.String(), Month), people: Type.Record(Type.String(), Type.Record(Type.String(), Tally)), warned: Type.Record(Type.String(), Type.Boolean()) }),
  () => ({ months: {}, people: {}, warned: {} }),
  // Changed by every answer: written once per data.flushIntervalMs, as the token counters are.
  { title: 'money spent', people: { byId: (doc) => doc.people }, perMessage: true },
);

const Fact = Type.Object({ text: Type.String(), by: Type.Optional(Type.String()) });
const Answer = Type.Object({
  /** The message that asked (its deletion for everyone takes the record with it) and who sent it. */
  questionId: Type.Optional(Type.String()),
  askedBy: Type.String(),
  at: Type.Integer(),
  leg: Type.String(),
  model: Type.String(),
  intendedLeg: Type.String(),
  intendedModel: Type.String(),
  failedLegs: Type.Array(Type.String()),
  profileModelMissing: Type.Optional(Type.String()),
  premium: Type.Boolean(),
  tools: Type.Array(Type.Object({ name: Type.String(), outcome: Type.String() })),
  facts: Type.Array(Fact),
  summaryPeople: Type.Optional(Type.Array(Type.String())),
  tokens: Type.Object({ prompt: Type.Integer(), cached: Type.Integer(), completion: Type.Integer() }),
  /** Undefined: some request's model has no known price (`unpricedModels` names them). */
  cost: Type.Optional(Type.Number()),
  unpricedModels: Type.Optional(Type.Array(Type.String())),
  ms: Type.Integer(),
  /** The start of the answer as sent, to find the record a `.why` replies to. */
  answer: Type.String(),
});
export type Answer = Static<typeof Answer>;

/** How many answers per chat `.why` can explain (the oldest go first). */
export const ANSWERS_KEPT = 20;

/** Each chat's recent answers for `.why`: a person's `.mydata` holds those they asked for. */
export const ANSWERS = Store.chatDoc('answers', Type.Object({ items: Type.Array(Answer, { maxItems: ANSWERS_KEPT }) }), () => ({ items: [] }), {
  title: 'recent answers explained by .why',
  // Changed by every answer: written once per data.flushIntervalMs, as the token counters are.
  perMessage: true,
  // An edited question takes the record along, as the chat history takes the answer: its start may repeat the old words.
  people: { items: (doc) => doc.items, author: (item) => item.askedBy, messageId: (item) => item.questionId, edited: () => undefined },
});
