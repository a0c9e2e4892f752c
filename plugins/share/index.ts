import { definePlugin, defineTool, phoneNumber, Type } from '../../core/index.js';

/**
 * `send_location` and `send_contact`: the model sends a place or a contact card into the chat it is answering, as
 * WhatsApp shows them (a map pin, a card with "Message" and "Save"). Only into that chat: the chat comes from the
 * turn, never from the model's arguments, so these are replies in another shape and act on nothing else.
 */
export default definePlugin({
  name: 'share',
  description: 'Sends locations and contact cards into the chat (the model\'s send_location and send_contact tools)',
  setup: () => ({
    tools: [
      defineTool({
        name: 'send_location',
        progress: 'sending the location…',
        // Into the chat that asked, as an answer is: no other chat, nothing changed in the world.
        effects: { outsideText: false, acts: 'nothing' },
        description: 'Send a location (a map pin) into this chat, e.g. when asked "send me the location of the station". Give the coordinates; name and address are shown on the pin.',
        parameters: Type.Object({
          latitude: Type.Number({ minimum: -90, maximum: 90, description: 'latitude in degrees' }),
          longitude: Type.Number({ minimum: -180, maximum: 180, description: 'longitude in degrees' }),
          name: Type.Optional(Type.String({ maxLength: 200, description: "the place's name" })),
          address: Type.Optional(Type.String({ maxLength: 300, description: "the place's address" })),
        }),
        run: async (args, call) => {
          const name = args.name?.trim();
          const address = args.address?.trim();
          await call.ctx.sendLocation({ latitude: args.latitude, longitude: args.longitude, ...(name ? { name } : {}), ...(address ? { address } : {}) });
          return `Sent the location ${args.latitude}, ${args.longitude}${name ? ` (${name})` : ''} to this chat. Do not repeat the coordinates unless asked.`;
        },
      }),
      defineTool({
        name: 'send_contact',
        progress: 'sending the contact card…',
        effects: { outsideText: false, acts: 'nothing' },
        description: 'Send a contact card (name and phone number) into this chat, e.g. when asked "send me Ann\'s contact". The number in international form.',
        parameters: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 200, description: "the contact's name" }),
          number: Type.String({ minLength: 5, maxLength: 30, description: 'phone number in international form, e.g. +6281234567890' }),
        }),
        run: async (args, call) => {
          const number = phoneNumber(args.number);
          if (!number) return `Error: "${args.number}" is not a phone number (digits in international form, e.g. +6281234567890). Nothing was sent.`;
          await call.ctx.sendContact({ name: args.name.trim(), number });
          return `Sent the contact card of ${args.name.trim()} (${number}) to this chat.`;
        },
      }),
    ],
  }),
});
