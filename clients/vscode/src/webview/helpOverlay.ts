/* The `?` overlay: the keys the timeline takes (client/timelineNav KEYS). */
import { KEYS } from '../client/timelineNav';
import { h } from './dom';

export function helpOverlay(): HTMLElement {
  const box = h('div', { class: 'help-overlay', role: 'dialog', 'aria-label': 'Keyboard and mouse', hidden: '' },
    h('h2', {}, 'Keyboard and mouse'),
    h('table', {}, ...KEYS.map(([k, what]) => h('tr', {}, h('th', {}, k), h('td', {}, what)))),
    h('p', { class: 'muted' }, 'Esc or ? closes this.'));
  box.addEventListener('click', () => { box.hidden = true; });
  return box;
}
