// Accessibility check of gradeline's pages in headless Chromium, driven by
// tests/integration/test_page_design.py: node axe_check.js JOB.json > report.json
//
// JOB: {"pages": [{"name", "file"}], "csp", "shots", "tags", "viewports": {name: [w, h]},
//       "schemes": ["light", "dark"], "chromium"}.
// Each page is served from its file at http://gradeline.test/NAME.html with the CSP the
// app sends (pages get nothing else: a request anywhere else is aborted and reported);
// axe-core runs in the page (injected with page.evaluate: a strict CSP would block a
// script tag) at every viewport and colour scheme, with a full-page screenshot
// NAME-VIEWPORT-SCHEME.png. Also per page and view: whether the page scrolls sideways
// (WCAG 1.4.10) and whether the stylesheet applied; once per page, the keyboard: the
// first Tab lands on the visible skip link, Enter on it moves focus to <main>, and every
// Tab stop shows a focus outline. The report lists everything; the test decides.
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const ORIGIN = 'http://gradeline.test';
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];

async function serve(ctx, files, csp, problems) {
  await ctx.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== ORIGIN) {
      problems.push(`request to ${url.href}`);
      return route.abort();
    }
    const file = files[path.basename(url.pathname)];
    if (!file) return route.fulfill({ status: 404, body: 'not here' });
    return route.fulfill({ status: 200, body: fs.readFileSync(file, 'utf8'),
      headers: { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': csp } });
  });
}

function watch(page, problems) {
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
}

async function axe(page, tags) {
  await page.evaluate(axeSource);
  const r = await page.evaluate(async (t) => await axe.run(document,
    { runOnly: { type: 'tag', values: t } }), tags);
  return { passes: r.passes.length,
    incomplete: r.incomplete.map((v) => ({ id: v.id, nodes: v.nodes.map((n) => n.target.join(' ')),
      why: v.nodes.map((n) => (n.any[0] || {}).message).slice(0, 3) })),
    violations: r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')) })) };
}

async function view(browser, job, files, name, vp, scheme) {
  const [width, height] = job.viewports[vp];
  const problems = [];
  const ctx = await browser.newContext({ viewport: { width, height }, colorScheme: scheme });
  await serve(ctx, files, job.csp, problems);
  const page = await ctx.newPage();
  watch(page, problems);
  await page.goto(`${ORIGIN}/${name}.html`, { waitUntil: 'load' });
  await page.screenshot({ path: path.join(job.shots, `${name}-${vp}-${scheme}.png`),
    fullPage: true });
  const result = await axe(page, job.tags);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  if (overflow > 0) problems.push(`the page scrolls sideways by ${overflow} px`);
  const styled = await page.evaluate(() => getComputedStyle(document.body).marginTop === '0px');
  if (!styled) problems.push('the stylesheet did not apply');
  await ctx.close();
  return { page: name, viewport: vp, scheme, ...result, problems };
}

function focusState() {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  const r = e.getBoundingClientRect();
  const s = getComputedStyle(e);
  const cls = e.className && typeof e.className === 'string' ? '.' + e.className.split(' ')[0] : '';
  return { tag: e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + cls,
    cls: e.className, href: e.getAttribute('href'), id: e.id,
    inView: r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.width > 20,
    outline: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2 };
}

async function keyboard(browser, job, files, name) {
  const problems = [];
  const [width, height] = job.viewports.desktop || Object.values(job.viewports)[0];
  const ctx = await browser.newContext({ viewport: { width, height } });
  await serve(ctx, files, job.csp, problems);
  const page = await ctx.newPage();
  const url = `${ORIGIN}/${name}.html`;
  await page.goto(url, { waitUntil: 'load' });
  await page.keyboard.press('Tab');
  const first = await page.evaluate(focusState);
  if (!first || first.cls !== 'gl-skip' || first.href !== '#main') {
    problems.push(`the first Tab stop is not the skip link: ${JSON.stringify(first)}`);
  } else if (!first.inView || !first.outline) {
    problems.push(`the skip link does not show when focused: ${JSON.stringify(first)}`);
  }
  await page.keyboard.press('Enter');
  const after = await page.evaluate(() => document.activeElement.id);
  if (after !== 'main') problems.push(`Enter on the skip link focused #${after}, not #main`);
  await page.goto(url, { waitUntil: 'load' });
  const stops = [];
  for (let i = 0; i < 200; i++) {
    await page.keyboard.press('Tab');
    const s = await page.evaluate(focusState);
    if (!s || (stops.length && stops[0].tag === s.tag)) break;
    stops.push(s);
  }
  for (const s of stops) if (!s.outline) problems.push(`no focus outline on ${s.tag}`);
  await ctx.close();
  return { page: name, tabStops: stops.length, problems };
}

(async () => {
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const files = Object.fromEntries(job.pages.map((p) => [`${p.name}.html`, p.file]));
  fs.mkdirSync(job.shots, { recursive: true });
  const browser = await chromium.launch({ executablePath: job.chromium, headless: true,
    args: FLAGS });
  const views = [];
  const keys = [];
  try {
    for (const { name } of job.pages) {
      for (const vp of Object.keys(job.viewports)) {
        for (const scheme of job.schemes) views.push(await view(browser, job, files, name, vp, scheme));
      }
      keys.push(await keyboard(browser, job, files, name));
    }
  } finally {
    await browser.close();
  }
  const version = JSON.parse(fs.readFileSync(require.resolve('axe-core/package.json'), 'utf8'))
    .version;
  process.stdout.write(JSON.stringify({ axe: version, views, keyboard: keys }, null, 1));
})().catch((e) => { console.error(e); process.exit(2); });
