import type { SearchStatsSnapshot } from '../../gateway/index.js';

/** Tool search on `/metrics` (issue #37 item 5): searches, zero results, conversion, tools never returned. */
export function renderSearchMetrics(stats: SearchStatsSnapshot): string[] {
  return [
    '# HELP switchboard_search_requests_total Tool searches answered (search_tools and GET /tools/search).',
    '# TYPE switchboard_search_requests_total counter',
    `switchboard_search_requests_total ${stats.searches}`,
    '# HELP switchboard_search_zero_results_total Tool searches that named no tool.',
    '# TYPE switchboard_search_zero_results_total counter',
    `switchboard_search_zero_results_total ${stats.zeroResults}`,
    "# HELP switchboard_search_conversions_total Agents' searches: followed within 10 minutes by a call of a tool they returned (hit), or not yet (miss).",
    '# TYPE switchboard_search_conversions_total counter',
    `switchboard_search_conversions_total{outcome="hit"} ${stats.conversions.hits}`,
    `switchboard_search_conversions_total{outcome="miss"} ${stats.conversions.misses}`,
    '# HELP switchboard_search_tools_never_returned Tools of the catalogue no search has returned since start.',
    '# TYPE switchboard_search_tools_never_returned gauge',
    `switchboard_search_tools_never_returned ${stats.neverReturned.count}`,
  ];
}
