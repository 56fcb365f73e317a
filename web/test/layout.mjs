// What a person sees on a dashboard page, measured in the browser: text of
// the charts (ECharts draws on a canvas; its text elements are read from the
// chart's zrender display list with their bounding boxes) and of the page.
// pageLayout() runs inside the page (page.evaluate(pageLayout)).

// Raw JSON keys that must never reach the screen: dotted snake_case paths, unit suffixes, sweep columns.
export const RAW_KEY = /[a-z0-9]+_[a-z0-9_]+\.[a-z]|_gbyte|_usd|_gbps\b|_ms\b|@0{4,}/;

export function pageLayout() {
  const out = { charts: 0, texts: 0, overlaps: [], clipped: [], chartText: [] };
  for (const div of document.querySelectorAll('.chart')) {
    const c = window.echarts.getInstanceByDom(div);
    if (!c) continue;
    if (div.offsetParent === null) continue;  // not displayed
    ++out.charts;
    const W = c.getWidth(), H = c.getHeight();
    const rects = [];
    for (const e of c.getZr().storage.getDisplayList(true)) {
      if (e.type !== 'tspan' && e.type !== 'text') continue;
      const text = e.style && e.style.text;
      if (!text || !String(text).trim()) continue;
      let hidden = false;
      for (let p = e; p; p = p.parent) if (p.ignore || p.invisible || (p.style && p.style.opacity === 0)) hidden = true;
      if (hidden) continue;
      // Text inside a clipped container (a scrolling legend) is drawn only where the clip shows it.
      let clip = null;
      for (let p = e; p && !clip; p = p.parent) if (p.getClipPath && p.getClipPath()) clip = p.getClipPath();
      e.updateTransform();
      const r = e.getBoundingRect().clone();
      const m = e.getComputedTransform();
      if (m) r.applyTransform(m);
      if (clip) {
        clip.updateTransform();
        const cr = clip.getBoundingRect().clone();
        const cm = clip.getComputedTransform();
        if (cm) cr.applyTransform(cm);
        if (!cr.intersect(r)) continue;
      }
      rects.push({ text: String(text), x: r.x, y: r.y, w: r.width, h: r.height });
    }
    out.texts += rects.length;
    const where = div.className.replace('chart', '').trim() || 'chart';
    for (const t of rects) {
      out.chartText.push(t.text);
      // 1 px of slack: anti-aliasing, rounding.
      if (t.x < -1 || t.y < -1 || t.x + t.w > W + 1 || t.y + t.h > H + 1)
        out.clipped.push(`${where}: "${t.text}" at ${Math.round(t.x)},${Math.round(t.y)} ${Math.round(t.w)}x${Math.round(t.h)} outside ${W}x${H}`);
    }
    for (let i = 0; i < rects.length; ++i)
      for (let j = i + 1; j < rects.length; ++j) {
        const a = rects[i], b = rects[j];
        const ox = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
        const oy = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
        if (ox > 2 && oy > 2) out.overlaps.push(`${where}: "${a.text}" and "${b.text}" overlap by ${Math.round(ox)}x${Math.round(oy)} px`);
      }
  }
  // DOM text clipped by its own box (a label wider than its cell, hidden by overflow).
  for (const e of document.querySelectorAll('h2, th, td, label, button, summary, p')) {
    if (e.offsetParent === null) continue;
    const s = getComputedStyle(e);
    if (s.overflow !== 'visible' && (e.scrollWidth > e.clientWidth + 1)) out.clipped.push(`DOM ${e.tagName}: "${e.textContent.slice(0, 60)}" overflows its box`);
  }
  // A section wider than the page scrolls sideways: its right part is hidden.
  for (const e of document.querySelectorAll('section')) {
    if (e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
      out.clipped.push(`DOM section "${(e.querySelector('h2') || e).textContent.slice(0, 60)}" is ${e.scrollWidth - e.clientWidth} px wider than its box`);
  }
  out.visibleText = document.body.innerText;
  return out;
}
