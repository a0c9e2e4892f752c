/** A gateway an owner can pick by name in set-up: its OpenAI-compatible base URL and a typical model. */
export interface GatewayPreset {
  name: string;
  baseUrl: string;
  model: string;
  /** Where its keys are made, said next to the key question. */
  keysAt?: string;
}

/**
 * The presets `.env.example` lists. Model names change: set-up offers the gateway's own `/v1/models` list when it
 * has one, and these are only the defaults when it has none.
 */
export const GATEWAY_PRESETS: readonly GatewayPreset[] = [
  { name: 'OpenAI', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', keysAt: 'https://platform.openai.com/api-keys' },
  { name: 'OpenRouter', baseUrl: 'https://openrouter.ai/api/v1', model: 'openai/gpt-4o-mini', keysAt: 'https://openrouter.ai/keys' },
  { name: 'Groq', baseUrl: 'https://api.groq.com/openai/v1', model: 'llama-3.3-70b-versatile', keysAt: 'https://console.groq.com/keys' },
  { name: 'DeepSeek', baseUrl: 'https://api.deepseek.com/v1', model: 'deepseek-chat', keysAt: 'https://platform.deepseek.com/api_keys' },
  { name: 'LiteLLM or your own gateway', baseUrl: 'http://127.0.0.1:4000/v1', model: '' },
];

/** The preset whose base URL this is (with or without a trailing slash), if any. */
export function presetFor(baseUrl: string): GatewayPreset | undefined {
  const clean = baseUrl.trim().replace(/\/+$/, '');
  return GATEWAY_PRESETS.find((p) => p.baseUrl === clean);
}
