// Grades by hand as TAs do, keyboard only, in headless Chromium: driven by
// tests/site/test_hand_grading.py: node hand_grading.js JOB.json  (NODE_PATH: playwright-core
// and axe-core).
//
// JOB: {"chromium", "tags", "browsers": {NAME: BASE_URL}, "steps": [STEP]}. Each browser is
// its own context (a TA through their own tunnel to the staff socket). A step is
// {"who": NAME, "do": ACTION, ...}:
//   open {path}        load BASE_URL + path; reports the status
//   key {keys: [...]}  presses each key ("Tab", or "Alt+b": an access key, as a person's
//                      keyboard sends it: a key down with the character, which Chromium
//                      matches to access keys; Playwright's own Alt+b sends no character);
//                      reports the focused element's id after each
//   type {text}        types into the focused element
//   submit {key}       presses the key (an access key of a submit button) and waits for
//                      the page it loads; reports the status
//   look               reports the page's text, its HTML and whether each input is checked
//   axe                reports axe-core's violations
//   shot {path}        a full-page screenshot
// Output: one JSON line, a list with one report per step.
const fs = require('fs');
const { chromium } = require('playwright-core');

const axeSource = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run'];

async function press(page, cdp, key) {
  if (!key.startsWith('Alt+')) return page.keyboard.press(key);
  const ch = key.slice(4);
  const code = /[0-9]/.test(ch) ? `Digit${ch}` : `Key${ch.toUpperCase()}`;
  const event = { modifiers: 1, key: ch, code, windowsVirtualKeyCode: ch.toUpperCase().charCodeAt(0) };
  await cdp.send('Input.dispatchKeyEvent', { type: 'keyDown', text: ch, unmodifiedText: ch, ...event });
  await cdp.send('Input.dispatchKeyEvent', { type: 'keyUp', ...event });
}

async function act(page, cdp, job, base, s) {
  const out = { who: s.who, do: s.do };
  if (s.do === 'open') {
    const r = await page.goto(base + s.path, { waitUntil: 'load' });
    out.status = r ? r.status() : 0;
  } else if (s.do === 'key') {
    out.focus = [];
    for (const k of s.keys) {
      await press(page, cdp, k);
      out.focus.push(await page.evaluate(() => document.activeElement && document.activeElement.id));
    }
  } else if (s.do === 'type') {
    await page.keyboard.type(s.text);
  } else if (s.do === 'submit') {
    const [r] = await Promise.all([page.waitForNavigation({ waitUntil: 'load' }),
      press(page, cdp, s.key)]);
    out.status = r ? r.status() : 0;
    out.url = page.url();
  } else if (s.do === 'look') {
    out.url = page.url();
    out.text = await page.innerText('body');
    out.html = await page.content();
    out.checked = await page.evaluate(() => Array.from(document.querySelectorAll('input:checked'))
      .map((e) => e.id));
  } else if (s.do === 'axe') {
    await page.evaluate(axeSource);
    const r = await page.evaluate(async (t) => await axe.run(document,
      { runOnly: { type: 'tag', values: t } }), job.tags);
    out.violations = r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')) }));
    out.passes = r.passes.length;
  } else if (s.do === 'shot') {
    await page.screenshot({ path: s.path, fullPage: true });
  }
  return out;
}

(async () => {
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const browser = await chromium.launch({ executablePath: job.chromium, args: FLAGS });
  const pages = {};
  const results = [];
  try {
    for (const [name, base] of Object.entries(job.browsers)) {
      const ctx = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
      const page = await ctx.newPage();
      pages[name] = { page, cdp: await ctx.newCDPSession(page), base };
    }
    for (const s of job.steps) {
      const { page, cdp, base } = pages[s.who];
      results.push(await act(page, cdp, job, base, s));
    }
  } finally {
    await browser.close();
  }
  process.stdout.write(JSON.stringify(results) + '\n');
})().catch((e) => { console.error(e); process.exit(1); });
