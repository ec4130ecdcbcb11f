// Opens nanoload's HTML reports in Debian's headless Chromium (driven by
// playwright-core; no browser is ever downloaded) and prints, as one JSON
// object on stdout, what each page shows: every chart's table as read from
// the DOM (a number cell's computed value, `data-v`, and beside it what it
// shows and how it is aligned), the number of bar marks its SVG draws, the
// facts, the lists, which groups are collapsed, any box that hides content
// behind a scroll bar, the console errors and every request that was not
// for a file (blocked and counted: the page must fetch nothing). The
// screenshot shows the page as it opens (collapsed groups closed); then
// every group is opened and read. Then, with every group open, how the page
// fits a desktop (1400 px) and a phone (390 px): its scroll width, the
// text rendered below 11 px (an SVG's text at its font size times the
// scale its viewBox is drawn at), the boxes reaching outside the page,
// the dates broken over two lines, the chart texts outside their SVG, and
// each chart's SVG as shown (bars, size, texts); at 390 px a second
// screenshot.
//
//   node report.mjs SPEC.json
//   SPEC: {"pages": [{"html": "/abs/report.html", "screenshot": "/abs/shot.png",
//                     "phone": "/abs/shot-390.png" (optional: the 390 px screenshot),
//                     "clip_height": 3000 (optional: only the top of the page)}]}
//
// Chromium: $NANOLOAD_CHROMIUM or /usr/bin/chromium, with a fresh
// --user-data-dir and the flags that keep it off the network.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const executablePath = process.env.NANOLOAD_CHROMIUM || '/usr/bin/chromium';
const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nanoload-chromium-'));
const started = Date.now();
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ],
  viewport: { width: 1400, height: 900 },
  deviceScaleFactor: 1,
});
const result = { chromium: context.browser()?.version() ?? null, pages: [] };

// How the open page fits its viewport (run in the page).
function fits() {
  const width = document.documentElement.clientWidth;
  const shown = (e) => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  const what = (e) => e.outerHTML.replace(/\s+/g, ' ').slice(0, 90);
  const chartOf = (e) => e.closest('figure[data-chart]')?.dataset.chart ?? '?';
  const small = [];
  const outside = [];
  for (const e of document.querySelectorAll('body *')) {
    if (!shown(e)) continue;
    const r = e.getBoundingClientRect();
    if ((r.width > 0 || r.height > 0) && (r.left < -0.5 || r.right > width + 0.5)) {
      outside.push(`${Math.round(r.left)}..${Math.round(r.right)} px: ${what(e)}`);
    }
    if (e instanceof SVGElement) continue;
    const own = [...e.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
    const px = parseFloat(getComputedStyle(e).fontSize);
    if (own && px < 11) small.push(`${px} px: ${what(e)}`);
    for (const pseudo of ['::before', '::after']) {
      const p = getComputedStyle(e, pseudo);
      const text = p.content && !['none', 'normal', '""'].includes(p.content);
      if (text && p.display !== 'none' && parseFloat(p.fontSize) < 11) {
        small.push(`${p.fontSize} (${pseudo} ${p.content}): ${what(e)}`);
      }
    }
  }
  // SVG text: its font size in user units times the scale it is drawn at
  const svgOutside = [];
  for (const svg of document.querySelectorAll('figure svg')) {
    if (!shown(svg)) continue;
    const box = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll('text')) {
      const m = t.getScreenCTM();
      const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
      const label = `${chartOf(svg)}: "${t.textContent.trim()}"`;
      if (px < 11) small.push(`${px.toFixed(1)} px: ${label}`);
      const r = t.getBoundingClientRect();
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5
          || r.bottom > box.bottom + 0.5) {
        svgOutside.push(`${label} at ${Math.round(r.left - box.left)}..${Math.round(r.right - box.left)}`
          + ` of ${Math.round(box.width)} px`);
      }
    }
  }
  // a date (and its time) is on one line; no text runs out of the page
  // (a text overflowing its box leaves the box inside)
  const broken = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const date = /\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2}(?::\d{2})?)?/g;
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (n.parentElement.closest('svg') || !shown(n.parentElement)) continue;
    const all = document.createRange();
    all.selectNodeContents(n);
    const r = all.getBoundingClientRect();
    if ((r.width > 0 || r.height > 0) && (r.left < -0.5 || r.right > width + 0.5)) {
      outside.push(`${Math.round(r.left)}..${Math.round(r.right)} px: the text "${n.textContent.trim().slice(0, 40)}" of ${what(n.parentElement)}`);
    }
    for (const m of n.textContent.matchAll(date)) {
      const range = document.createRange();
      range.setStart(n, m.index);
      range.setEnd(n, m.index + m[0].length);
      const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.bottom)));
      if (tops.size > 1) broken.push(`"${m[0]}" on ${tops.size} lines: ${what(n.parentElement)}`);
    }
  }
  // each chart's SVG as shown
  const charts = [...document.querySelectorAll('figure[data-chart]')].map((f) => {
    const svg = [...f.querySelectorAll('svg')].find(shown);
    const box = svg ? svg.getBoundingClientRect() : null;
    return {
      id: f.dataset.chart,
      marks: svg ? [...svg.querySelectorAll('rect')]
        .filter((r) => (r.getAttribute('fill') || '').toUpperCase() !== '#FFFFFF').length : 0,
      svg_px: box ? [Math.round(box.width), Math.round(box.height)] : [0, 0],
      texts: svg ? [...svg.querySelectorAll('text')].map((t) => t.textContent.trim()) : [],
    };
  });
  return {
    width,
    scroll_width: document.documentElement.scrollWidth,
    height: document.documentElement.scrollHeight,
    small, outside, svg_outside: svgOutside, broken, charts,
  };
}
try {
  for (const want of spec.pages) {
    const page = await context.newPage();
    const errors = [];
    const requests = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:')) return route.continue();
      requests.push(url);
      return route.abort();
    });
    const t0 = Date.now();
    await page.goto(pathToFileURL(want.html).href, { waitUntil: 'load' });
    const opened = await page.evaluate(() => ({
      collapsed: [...document.querySelectorAll('details')].filter((d) => !d.open).map((d) => d.id),
      height: document.documentElement.scrollHeight,
    }));
    const shot = { path: want.screenshot, fullPage: true };
    if (want.clip_height) {
      shot.clip = { x: 0, y: 0, width: 1400, height: Math.min(want.clip_height, opened.height) };
    }
    await page.screenshot(shot);
    await page.evaluate(() => document.querySelectorAll('details').forEach((d) => { d.open = true; }));
    const shown = await page.evaluate(() => {
      const text = (el) => el.textContent;
      const value = (td) => (td.hasAttribute('data-v') ? td.getAttribute('data-v') : td.textContent);
      const cells = (tr) => [...tr.querySelectorAll('td')].map(value);
      const table = (t) => ({
        columns: [...t.querySelectorAll('thead th')].map(text),
        rows: [...t.querySelectorAll('tbody tr')].map(cells),
        total: [...t.querySelectorAll('tfoot tr')].map(cells)[0] ?? null,
        // every number cell: its column, value, text and alignment
        numbers: [...t.querySelectorAll('tr')].flatMap((tr) => [...tr.querySelectorAll('td')]
          .map((td, i) => [td, i]).filter(([td]) => td.hasAttribute('data-v'))
          .map(([td, i]) => [t.querySelectorAll('thead th')[i]?.textContent ?? '',
            td.getAttribute('data-v'), td.textContent, getComputedStyle(td).textAlign])),
      });
      // boxes whose content does not fit and is clipped or scrolled
      const hidden = [...document.querySelectorAll('body *')].filter((e) => {
        const o = getComputedStyle(e);
        const clips = [o.overflowX, o.overflowY].some((v) => v !== 'visible');
        return clips && (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1);
      }).map((e) => e.outerHTML.slice(0, 80));
      // tables wider than the page's body
      const body = document.body.getBoundingClientRect();
      const wide = [...document.querySelectorAll('table')].filter((t) =>
        t.getBoundingClientRect().right > body.right + 1).map((t) => t.outerHTML.slice(0, 80));
      const charts = [...document.querySelectorAll('figure[data-chart]')].map((f) => {
        const id = f.dataset.chart;
        const svg = f.querySelector('svg');
        const box = svg ? svg.getBoundingClientRect() : null;
        return {
          id,
          series: f.dataset.series ? f.dataset.series.split(',') : [],
          // bar marks: every rect but the white background
          marks: svg ? [...svg.querySelectorAll('rect')]
            .filter((r) => (r.getAttribute('fill') || '').toUpperCase() !== '#FFFFFF').length : 0,
          svg_px: box ? [Math.round(box.width), Math.round(box.height)] : [0, 0],
          texts: svg ? svg.querySelectorAll('text').length : 0,
          ...table(f.querySelector(`table[data-chart-table="${id}"]`)),
        };
      });
      const facts = Object.fromEntries(
        [...document.querySelectorAll('[data-fact]')].map((e) => [e.dataset.fact, e.textContent]));
      const lists = Object.fromEntries(
        [...document.querySelectorAll('table[data-list]')].map((t) => [t.dataset.list, table(t)]));
      const missing = [...document.querySelectorAll('[data-missing]')].map((e) => e.dataset.missing);
      return {
        title: document.title,
        charts,
        facts,
        lists,
        missing,
        hidden,
        wide,
        // anything that could load something
        external: document.querySelectorAll('script, link, img, iframe, object, embed, [src], [href]').length,
      };
    });
    const desktop = await page.evaluate(fits);
    await page.setViewportSize({ width: 390, height: 900 });
    if (want.phone) await page.screenshot({ path: want.phone, fullPage: true });
    const phone = await page.evaluate(fits);
    const fit = [desktop, phone];
    result.pages.push({ html: want.html, ms: Date.now() - t0, errors, requests, ...opened, ...shown, fit });
    await page.close();
  }
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
result.ms = Date.now() - started;
process.stdout.write(JSON.stringify(result));
