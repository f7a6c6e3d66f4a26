/* What the agent features show without the vscode API (unit-tested): the
 * arguments of the MCP server definition (`nsys-ai mcp --profile ...` for the
 * profiles open in the window) and the Markdown of an agent/ask answer with
 * every tool call the model made, so each number can be traced. */
import type { AgentAskResult } from '../protocol/generated/agent.ask.result';

/** `nsys-ai mcp` arguments that open these profiles first (ids p1, p2, ... in this order). */
export function mcpServerArgs(profilePaths: readonly string[]): string[] {
  return ['mcp', ...profilePaths.flatMap((p) => ['--profile', p])];
}

function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…`;
}

/** The answer, then one line per tool call (tool, arguments, outcome). */
export function askMarkdown(r: AgentAskResult): string {
  const out = [`# ${r.question}`, '', r.answer, ''];
  const llm = r.llm;
  if (llm && llm.toolCalls) {
    out.push(`## Tool calls (${llm.toolCalls.length}, ${llm.turns ?? 0} turns, stop: ${llm.stopReason ?? '?'})`, '');
    for (const c of llm.toolCalls) {
      const raw: unknown = c.arguments;
      const args = clip(typeof raw === 'string' ? raw : JSON.stringify(raw), 200);
      out.push(`- turn ${c.turn}: \`${c.tool}\` \`${args}\` → ${c.isError ? `error ${c.error?.code}: ${c.error?.message}` : 'ok'}`);
    }
    out.push('', 'The full results are in the agent/ask reply (`llm.toolCalls[].result`).');
  }
  return out.join('\n');
}
