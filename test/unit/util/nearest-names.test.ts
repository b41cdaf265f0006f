import { describe, expect, it } from 'vitest';
import { nearestNames } from '../../../src/util/nearest-names.js';

const TOOLS = [
  { name: 'mcp_everything_echo', shortName: 'echo' },
  { name: 'mcp_everything_add', shortName: 'add' },
  { name: 'mcp_everything_long_running_operation', shortName: 'long_running_operation' },
  { name: 'mcp_rich_touch', shortName: 'touch' },
  { name: 'mcp_rich_log', shortName: 'log' },
  { name: 'mcp_github_search_issues', shortName: 'search_issues' },
];

describe('nearestNames', () => {
  it('finds a tool by its own name, typed without the mcp_<server>_ prefix', () => {
    expect(nearestNames('echo', TOOLS)).toEqual(['mcp_everything_echo']);
    expect(nearestNames('ECHO', TOOLS)).toEqual(['mcp_everything_echo']);
  });

  it('finds near spellings of the full or the short name, closest first', () => {
    expect(nearestNames('mcp_everthing_echo', TOOLS)).toEqual(['mcp_everything_echo']);
    expect(nearestNames('ecoh', TOOLS)).toEqual(['mcp_everything_echo']);
    expect(nearestNames('search_issue', TOOLS)).toEqual(['mcp_github_search_issues']);
  });

  it('gives only the exact short names when there are some; otherwise names containing what was typed', () => {
    const tools = [...TOOLS, { name: 'mcp_other_add_item', shortName: 'add_item' }, { name: 'mcp_echo_add', shortName: 'add' }];
    expect(nearestNames('add', tools)).toEqual(['mcp_echo_add', 'mcp_everything_add']);
    expect(nearestNames('add_it', tools)).toEqual(['mcp_other_add_item']);
    expect(nearestNames('running', TOOLS)).toEqual(['mcp_everything_long_running_operation']);
  });

  it('suggests nothing rather than a wrong guess; a shared prefix buys no slack', () => {
    expect(nearestNames('mcp_rich_nothing', TOOLS)).toEqual([]);
    expect(nearestNames('x', TOOLS)).toEqual([]);
    expect(nearestNames('', TOOLS)).toEqual([]);
    expect(nearestNames('mcp_everything_echo', TOOLS)).toEqual([]);
  });

  it('gives at most `limit` names', () => {
    expect(nearestNames('mcp', TOOLS, 2)).toHaveLength(2);
  });
});
