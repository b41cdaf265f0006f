import { describe, expect, it } from 'vitest';
import { exaVerdict } from '../../../src/config/exa.js';

describe('exaVerdict', () => {
  it('leaves servers that are not Exa alone', () => {
    expect(exaVerdict('search', { url: 'https://mcp.example.com/mcp?exaApiKey=x' })).toEqual({ filtered: false });
  });

  it('recognises Exa by name, url or args and extracts the key from each place', () => {
    expect(exaVerdict('EXA', { command: 'npx', env: { EXA_API_KEY: 'k1' } })).toEqual({ filtered: true, apiKeys: ['k1'] });
    expect(exaVerdict('web', { url: 'https://mcp.exa.ai/mcp?exaApiKey=k%202' })).toEqual({ filtered: true, apiKeys: ['k 2'] });
    expect(exaVerdict('web', { command: 'npx', args: ['mcp-remote', 'https://mcp.exa.ai/mcp?x=1&exaApiKey=k3'] })).toEqual({
      filtered: true,
      apiKeys: ['k3'],
    });
    expect(exaVerdict('exa', { command: 'exa-mcp' })).toEqual({ filtered: true, apiKeys: [] });
  });

  it('does not take an unexpanded ${EXA_API_KEY} for a key', () => {
    expect(exaVerdict('exa', { command: 'x', env: { EXA_API_KEY: '${EXA_API_KEY}' } })).toEqual({ filtered: true, apiKeys: [] });
  });

  it('filters when only web_search_exa is asked for', () => {
    expect(exaVerdict('exa', { command: 'x', args: ['--tools=web_search_exa'] }).filtered).toBe(true);
    expect(exaVerdict('exa', { url: 'https://mcp.exa.ai/mcp?tools=web_search_exa' }).filtered).toBe(true);
  });

  it('keeps a server that asks for other tools, in any of the spellings', () => {
    expect(exaVerdict('exa', { url: 'https://mcp.exa.ai/mcp?tools=web_search_exa,crawling_exa' })).toEqual({ filtered: false });
    expect(exaVerdict('exa', { command: 'x', args: ['--tools=deep_researcher_start'] })).toEqual({ filtered: false });
    expect(exaVerdict('exa', { command: 'x', args: ['--tools', 'web_search_exa, company_research_exa'] })).toEqual({
      filtered: false,
    });
    expect(exaVerdict('exa', { command: 'npx', args: ['mcp-remote', 'https://mcp.exa.ai/mcp?tools=get_code_context_exa'] })).toEqual({
      filtered: false,
    });
  });
});
