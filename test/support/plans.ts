/** A node of a plan from EXPLAIN (FORMAT JSON); `Actual Loops` with ANALYZE. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Loops'?: number;
  Plans?: PlanNode[];
}

/** The node and every node under it, depth first. */
export const planNodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(planNodes)];

/** `<Node Type>[ on <relation>][ using <index>]`, as plan assertions name a node. */
export const describeNode = (n: PlanNode): string =>
  `${n['Node Type']}${n['Relation Name'] ? ` on ${n['Relation Name']}` : ''}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}`;
