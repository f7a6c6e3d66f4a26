/* A small, safe markdown renderer for kernel explanations and findings:
 * headings, paragraphs, lists, tables, **bold**, *italic*, `code`, fenced code.
 * It builds DOM nodes (never innerHTML), so profile strings cannot inject markup. */
import { h } from './dom';

function inline(text: string): Node[] {
  const out: Node[] = [];
  const re = /(\\[\\`*_{}[\]()#+\-.!|<>]|`[^`]+`|\*\*(?:\\.|[^*])+\*\*|\*[^*\s](?:\\.|[^*])*\*|\[[^\]]+\]\([^)]+\))/g;
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m.index > last) out.push(document.createTextNode(text.slice(last, m.index)));
    const tok = m[0];
    if (tok.startsWith('\\')) out.push(document.createTextNode(tok.slice(1)));
    else if (tok.startsWith('`')) out.push(h('code', {}, tok.slice(1, -1)));
    else if (tok.startsWith('**')) out.push(h('strong', {}, ...inline(tok.slice(2, -2))));
    else if (tok.startsWith('[')) out.push(document.createTextNode(tok.slice(1, tok.indexOf(']'))));
    else out.push(h('em', {}, ...inline(tok.slice(1, -1))));
    last = m.index + tok.length;
  }
  if (last < text.length) out.push(document.createTextNode(text.slice(last)));
  return out;
}

export function renderMarkdown(md: string): HTMLElement {
  const root = h('div', { class: 'md' });
  const lines = md.replace(/\r\n/g, '\n').split('\n');
  let list: HTMLElement | undefined;
  let para: string[] = [];
  const flush = () => {
    if (para.length) root.append(h('p', {}, ...inline(para.join(' '))));
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('```')) {
      flush(); list = undefined;
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i]!.startsWith('```'); i++) body.push(lines[i]!);
      root.append(h('pre', {}, h('code', {}, body.join('\n'))));
      continue;
    }
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    if (heading) {
      flush(); list = undefined;
      const level = Math.min(6, heading[1]!.length + 2);
      root.append(h(`h${level}` as 'h3', {}, ...inline(heading[2]!)));
      continue;
    }
    if (/^\s*\|.*\|\s*$/.test(line)) {
      flush(); list = undefined;
      const table = h('table');
      for (; i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i]!); i++) {
        const cells = lines[i]!.trim().slice(1, -1).split('|').map((c) => c.trim());
        if (cells.every((c) => /^:?-+:?$/.test(c))) continue;
        table.append(h('tr', {}, ...cells.map((c) => h(table.childElementCount === 0 ? 'th' : 'td', {}, ...inline(c)))));
      }
      i--;
      root.append(table);
      continue;
    }
    const item = /^\s*(?:[-*]|\d+\.)\s+(.*)$/.exec(line);
    if (item) {
      flush();
      if (!list) { list = h('ul'); root.append(list); }
      list.append(h('li', {}, ...inline(item[1]!)));
      continue;
    }
    if (line.trim() === '') { flush(); list = undefined; continue; }
    list = undefined;
    para.push(line.trim());
  }
  flush();
  return root;
}
