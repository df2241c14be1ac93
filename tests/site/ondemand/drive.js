// Uses gradeline's Open OnDemand app as people would, through the portal in headless
// Chromium: node drive.js JOB.json  (NODE_PATH: playwright-core and axe-core).
//
// JOB: {"portal", "chromium", "tags", "steps": [{"user", "password", "path",
//        "handin": {"assignment", "file"} | null, "fill": {SELECTOR: VALUE} | null,
//        "click": BUTTON TEXT | null, "axe": bool, "shot": PATH | null,
//        "viewport": [w, h] | null}]}
// Each step logs in (the portal's basic authentication), opens PATH, hands a file in
// through the page's form if asked, or fills fields (a select is chosen from) and
// clicks the button with that text, then reports the last response's status, the URL,
// the page's text, axe-core's violations and any request that left the portal.
const fs = require('fs');
const { chromium } = require('playwright-core');

const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];

async function step(browser, job, s) {
  const [width, height] = s.viewport || [1280, 800];
  const ctx = await browser.newContext({ viewport: { width, height },
    httpCredentials: { username: s.user, password: s.password } });
  const elsewhere = [];
  await ctx.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(job.portal) || url.startsWith('data:')) return route.continue();
    elsewhere.push(url);
    return route.abort();
  });
  const page = await ctx.newPage();
  let response = await page.goto(job.portal + s.path, { waitUntil: 'load' });
  if (s.handin) {
    await page.selectOption('select#handin-assignment', s.handin.assignment);
    await page.setInputFiles('input#handin-file', s.handin.file);
    [response] = await Promise.all([page.waitForNavigation({ waitUntil: 'load' }),
      page.click('form button[type=submit]')]);
  }
  for (const [sel, value] of Object.entries(s.fill || {})) {
    const field = page.locator(sel);
    if (await field.evaluate((e) => e.tagName) === 'SELECT') await field.selectOption(value);
    else await field.fill(value);
  }
  if (s.click) {
    [response] = await Promise.all([page.waitForNavigation({ waitUntil: 'load' }),
      page.locator('button', { hasText: s.click }).first().click()]);
  }
  const out = { user: s.user, path: s.path, status: response ? response.status() : 0,
    url: page.url(), text: await page.innerText('body'), elsewhere, violations: [] };
  if (s.axe) {
    await page.evaluate(axeSource);
    const r = await page.evaluate(async (t) => await axe.run(document,
      { runOnly: { type: 'tag', values: t } }), job.tags);
    out.violations = r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')) }));
  }
  if (s.shot) await page.screenshot({ path: s.shot, fullPage: true });
  await ctx.close();
  return out;
}

(async () => {
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const browser = await chromium.launch({ executablePath: job.chromium, args: FLAGS });
  const results = [];
  try {
    for (const s of job.steps) results.push(await step(browser, job, s));
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(results) + '\n');
})().catch((e) => { console.error(e); process.exit(1); });
