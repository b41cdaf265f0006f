import { estimateTokens } from './token-estimate.js';

/**
 * The tokens of tool definitions handed to an agent (a list, a search answer, a REST body), for its
 * budget (issue #38 item 4). A list object is estimated once: lists are cached per catalogue
 * version × view, so the same object is handed out many times.
 */
export class DefinitionTokens {
  readonly #byList = new WeakMap<object, number>();

  of(definitions: object | string): number {
    if (typeof definitions === 'string') return estimateTokens(definitions);
    let tokens = this.#byList.get(definitions);
    if (tokens === undefined) {
      tokens = estimateTokens(JSON.stringify(definitions));
      this.#byList.set(definitions, tokens);
    }
    return tokens;
  }
}
