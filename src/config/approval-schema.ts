import { z } from 'zod';
import { MAX_TIMER_MS } from '../util/abort.js';

/** The daemon-wide approval settings of the config file (issue #22 item 7, issue #40 item 3). */
export const ApprovalSettingsShape = {
  /** How long a call that needs approval (`requireApproval`) waits for an operator, in ms. @default 120000 */
  approvalTimeoutMs: z.number().int().positive().max(MAX_TIMER_MS).default(120_000),
  /**
   * How a 2026-07-28 agent whose call needs approval is asked (issue #40 item 3): `url` sends it
   * a link to the dashboard's approval page (an operator decides); `form` asks its user yes or
   * no (the agent's user decides). Either way its request ends, and its retry runs the call once
   * approved. @default "url"
   */
  approvalPrompt: z.enum(['url', 'form']).default('url'),
  /**
   * The dashboard's address as the agents' users reach it (`https://switchboard.example.com`),
   * for the approval link. @default the address the agent's request came to
   */
  approvalUrl: z.url({ protocol: /^https?$/ }).optional(),
};
