import type { Prompt } from '@modelcontextprotocol/client';
import type { Named } from './naming.js';
import { NamedCatalogue } from './named-catalogue.js';

/**
 * Prompts as Switchboard exposes them (SPEC §7): the same exposed names as tools
 * (`<prefix><name>`), the server's own fields passed through.
 */
export interface BridgedPrompt {
  /** Exposed name, unique among prompts. */
  name: string;
  server: string;
  /** The name to get on the server. */
  originalName: string;
  title?: string;
  description?: string;
  arguments?: Prompt['arguments'];
  icons?: Prompt['icons'];
  _meta?: Prompt['_meta'];
}

export function bridgePrompt({ entry, item: prompt, name }: Named<Prompt>): BridgedPrompt {
  const { name: originalName, ...fields } = prompt;
  return { ...fields, name, server: entry.server, originalName };
}

/** The aggregated prompt list of every server. */
export class PromptCatalogue extends NamedCatalogue<Prompt, BridgedPrompt> {
  constructor() {
    super(bridgePrompt);
  }
}

/** A prompt as `prompts/list` serves it: the server's prompt under its exposed name. */
export function toMcpPrompt(prompt: BridgedPrompt): Prompt {
  const { server: _server, originalName: _original, ...fields } = prompt;
  return fields as Prompt;
}
