/**
 * The gateway's face (SPEC §17): the one module of the agent side that `http/` imports. The
 * `Gateway` does the work; the rest are the shapes and the few pure helpers the wire code needs
 * to speak about it (an agent, a view, a request's options, a list's kind, the meta-tools).
 */
export { Gateway, type Authentication, type CatalogueOptions, type GatewayDeps } from './gateway.js';
export type { AgentRef } from './agents/agent-ref.js';
export type { AgentView, ViewedTool } from './agents/agent-view.js';
// What an agent's event feed may carry (issue #22): the face decides it, /events only delivers.
export { scopeEvent, scopeHello, type ScopeTools, type ScopedHello } from './agents/event-scope.js';
export type { AgentRegistry } from './agents/agent-registry.js';
export type { AgentInfo } from './agents/agent-types.js';
export type { Policies, PolicyCounts } from './policies/policies.js';
export type { ImpactRow } from './policies/policy-impact.js';
export type { Approvals, PendingApproval } from './approvals/approvals.js';
export { ApprovalPending } from './approvals/approval-types.js';
export type { AuditLog } from './audit/audit-log.js';
export type { CallMetrics } from './requests/call-metrics.js';
export { CALL_OUTCOMES } from './requests/call-metrics.js';
export type { InFlightCalls } from './requests/in-flight-calls.js';
export type { RequestMetrics } from './requests/request-metrics.js';
export type { RequestOptions, RequestResult } from './requests/pipeline.js';
export type { AgentRequest } from './requests/request-router.js';
export type { ListKind, McpLists } from './lists/agent-lists.js';
export type { CatalogueModes } from './lists/catalogue-mode.js';
export { ReadInput, runMetaTool, ScriptInput, type ResultReader, type ScriptRunner, type ToolCaller } from './lists/meta-tools.js';
export type { RunningScript } from './scripts/script-runs.js';
export type { ReadRequest } from './results/result-reader.js';
export { DESCRIBE_TOOLS, SEARCH_TOOLS } from './lists/meta-tool-defs.js';
export type { AgentBudgets, BudgetStatus, BudgetWindow } from './agents/agent-budgets.js';
export { TRUNCATED_META_KEY, type Truncation } from './results/result-guard.js';
export type { SearchHealth } from './lists/search-setup.js';
export type { SearchStatsSnapshot } from './lists/search-stats.js';
export { ifNoneMatchHits, type ToolListQuery } from './lists/tool-list-cache.js';
export { toolNotFound, withToolSuggestions } from './lists/tool-not-found.js';
export { CLIENT_GONE } from './requests/in-flight-calls.js';
export { onClientGone } from './requests/client-gone.js';
export { TASKS_EXTENSION, createTaskResult, detailedTask, type TaskRecord, type TaskStatus } from './tasks/task-record.js';
export { LEGACY_TASKS_CAPABILITY, legacyCreateTaskResult, legacyTask, legacyTaskPayload } from './tasks/legacy-task.js';
export type { Tasks } from './tasks/tasks.js';
export type { NativeTasks } from './tasks/native-tasks.js';
export type { TaskSupport } from './tasks/task-support.js';
