import { Store, Type, type Static } from '../../core/index.js';

/** The options in config.json `plugins.links`. */
export const options = Type.Object({
  maxLinksPerMessage: Type.Integer({ title: 'Links read per message', minimum: 1, maximum: 10, default: 3, description: 'most links of one message that are read (the others are left, and the reply says so)' }),
  maxBytes: Type.Integer({ title: 'Largest download (bytes)', minimum: 100_000, maximum: 100_000_000, default: 10_000_000, description: 'most bytes received for one link (counted as they arrive, whatever the site claims)' }),
  timeoutSeconds: Type.Integer({ title: 'Time per link (seconds)', minimum: 3, maximum: 120, default: 20, description: 'most time fetching one link takes, redirects included (a video transcript gets three times this)' }),
  readSeconds: Type.Integer({ title: 'Time to read a page (seconds)', minimum: 1, maximum: 60, default: 10, description: "most time turning one page's HTML into text (a page that takes longer is given up, and the reply says so)" }),
  maxRedirects: Type.Integer({ title: 'Redirects followed', minimum: 0, maximum: 10, default: 5, description: 'redirects followed per link, each destination checked again' }),
  maxChars: Type.Integer({ title: 'Characters given to the model', minimum: 1000, maximum: 200_000, default: 20_000, description: 'most characters of one link given to the model (the rest is cut, and the model is told)' }),
  cacheHours: Type.Integer({ title: 'Cache (hours)', minimum: 0, maximum: 168, default: 24, description: 'a link read is reused for this long without fetching it again (0: never reused)' }),
  subtitleLanguages: Type.String({ title: 'Subtitle languages', minLength: 1, default: 'en.*,id.*', description: "yt-dlp's --sub-langs for video transcripts" }),
});
export type LinksOptions = Static<typeof options>;

/** A chat's own switch: link reading turned off there (`.read off`). */
export const CHAT_SETTING = Store.chatDoc('reading', Type.Object({ off: Type.Boolean() }), () => ({ off: false }), { path: 'links/chats', title: 'link reading switch' });
