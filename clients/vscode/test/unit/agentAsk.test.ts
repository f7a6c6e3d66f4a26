/* The agent features' pure parts: the MCP server arguments and the Markdown
 * of an agent/ask answer with its tool calls. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { askMarkdown, mcpServerArgs } from '../../src/client/agentAsk';

test('mcp server args open the window\'s profiles first', () => {
  assert.deepEqual(mcpServerArgs([]), ['mcp']);
  assert.deepEqual(mcpServerArgs(['/a b.sqlite', '/c.sqlite']), ['mcp', '--profile', '/a b.sqlite', '--profile', '/c.sqlite']);
});

test('ask markdown lists every tool call and its outcome', () => {
  const md = askMarkdown({
    question: 'Why?', mode: 'llm', answer: 'Because.', analyses: [], evidence: [],
    llm: {
      model: 'm', provider: 'openai', cached: false, turns: 2, stopReason: 'answer',
      toolCalls: [
        { turn: 1, tool: 'sql_query', arguments: { sql: 'SELECT 1' }, isError: false, result: {} },
        { turn: 1, tool: 'nope', arguments: 'x'.repeat(500) as unknown as Record<string, unknown>, isError: true, error: { code: -32602, message: 'unknown tool' } },
      ],
    },
  });
  assert.match(md, /^# Why\?\n\nBecause\./);
  assert.match(md, /Tool calls \(2, 2 turns, stop: answer\)/);
  assert.match(md, /turn 1: `sql_query` `\{"sql":"SELECT 1"\}` → ok/);
  assert.match(md, /`nope` `x{200}…` → error -32602: unknown tool/);
  assert.equal(askMarkdown({ question: 'q', mode: 'evidence', answer: 'a', analyses: [], evidence: [], llm: null }), '# q\n\na\n');
});
