import type { Tool } from '@modelcontextprotocol/client';
import { NamedCatalogue } from './named-catalogue.js';
import { bridgeTool, type BridgedTool } from './tool-bridge.js';

export type { NameDiff } from './named-catalogue.js';

/** The aggregated tool list of every server (see `NamedCatalogue`). */
export class ToolCatalogue extends NamedCatalogue<Tool, BridgedTool> {
  constructor() {
    super(bridgeTool);
  }
}
