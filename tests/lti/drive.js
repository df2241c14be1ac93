// Drives an LTI platform (tests/lti/platform) and gradeline's tool in headless Chromium,
// as an instructor and students would: a deep link, launches, a hand-in through the
// page. One step per run, in a fresh browser (its own cookies, as a person's own).
//
//   node drive.js deeplink PLATFORM USER ASSIGNMENT SHOT
//   node drive.js launch PLATFORM USER RESOURCE_LINK SHOT [ASSIGNMENT FILE]
//
// Prints one JSON line: what the page said (its text, and for a deep link the resource
// link the platform made). playwright-core comes from NODE_PATH (the test installs it).
const { chromium } = require("playwright-core");

const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
  "--disable-component-update", "--disable-sync", "--no-first-run"];

async function main() {
  const [step, platform, user, what, shot, assignment, file] = process.argv.slice(2);
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: FLAGS });
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const out = { step };
  try {
    await page.goto(platform + "/");
    if (step === "deeplink") {
      await page.click(`a.deeplink[href*="user_id=${user}"]`);
      await page.waitForSelector("select#assignment");
      await page.selectOption("select#assignment", what);
      if (shot) await page.screenshot({ path: shot, fullPage: true });
      await Promise.all([page.waitForSelector("#dl-done"), page.click("button[type=submit]")]);
      out.resource_link = await page.getAttribute("li.created", "data-rl");
    } else {
      await page.click(`a.launch[data-user="${user}"][data-rl="${what}"]`);
      await page.waitForSelector("h1");
      if (file) {
        await page.selectOption("select#handin-assignment", assignment);
        await page.setInputFiles("input#handin-file", file);
        await Promise.all([page.waitForNavigation(), page.click("form button[type=submit]")]);
      }
      if (shot) await page.screenshot({ path: shot, fullPage: true });
    }
    out.url = page.url();
    out.text = await page.innerText("body");
  } catch (e) {
    out.error = String(e);
    out.text = await page.innerText("body").catch(() => "");
  }
  await browser.close();
  console.log(JSON.stringify(out));
}

main();
