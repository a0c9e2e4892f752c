/** Kinds of media a message can carry. `voice` is a push-to-talk voice note (ptt). */
export type MediaKind = 'voice' | 'audio' | 'image' | 'video' | 'document' | 'sticker';
