// The widget's toolbar stays on one line at every width: at narrow widths the title, the legend, the
// status and the search box give room, the buttons keep theirs, and the `?` button (the last) stays
// on the line, inside the bar (it used to wrap onto a second line). Throws on the first failure.

export async function checkToolbarOneLine(tl, step) {
  const widths = [1100, 800, 640, 520, 440];
  const seen = [];
  for (const w of widths) {
    const r = await tl.evaluate(async (e, w) => {
      e.style.width = `${w}px`;
      await new Promise((res) => requestAnimationFrame(() => requestAnimationFrame(res)));
      const bar = e.querySelector(".nsys-tl-bar").getBoundingClientRect();
      const kids = [...e.querySelector(".nsys-tl-bar").children].filter((k) => k.getBoundingClientRect().width > 0);
      const mids = kids.map((k) => { const b = k.getBoundingClientRect(); return Math.round(b.top + b.height / 2); });
      const help = e.querySelector(".nsys-tl-helpbtn").getBoundingClientRect();
      return { barH: Math.round(bar.height), lines: new Set(mids).size, helpRight: Math.round(help.right), barRight: Math.round(bar.right),
        helpW: Math.round(help.width), zoomIn: Math.round(e.querySelector(".nsys-tl-zoom-in").getBoundingClientRect().width) };
    }, w);
    seen.push({ w, ...r });
    if (r.lines !== 1) throw new Error(`toolbar on ${r.lines} lines at ${w} px: ${JSON.stringify(r)}`);
    if (r.helpRight > r.barRight || r.helpW < 12 || r.zoomIn < 12) throw new Error(`"?" not fully on the toolbar at ${w} px: ${JSON.stringify(r)}`);
  }
  await tl.evaluate((e) => { e.style.width = ""; });
  step("toolbar one line", { seen });
}
