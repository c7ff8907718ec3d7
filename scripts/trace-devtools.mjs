// Photographs a trace file in Chrome DevTools' Performance panel, the
// trace viewer that Chromium carries inside itself (devtools://devtools/
// bundled/trace_app.html), so that it works without a network.
//
//   node trace-devtools.mjs TRACE.json OUT.png
//
// Needs puppeteer-core (npm) and Chromium (CHROMIUM, default
// /usr/bin/chromium); scripts/trace-screenshot.sh installs both. It loads
// the file through the panel's own "Load profile" input, expands the
// tracks of every node and PE, zooms to about 2 ms around a flow arrow
// from a PE of node 0 to a PE of node 1, and selects the slice that
// arrow ends in, so that DevTools draws the arrow and shows the slice's
// arguments. The steps that reach into DevTools (its modules and
// singletons) follow the Chromium release it was written against
// (Debian's 156); a step that fails says which.
import puppeteer from 'puppeteer-core';

const [trace, out] = process.argv.slice(2);
if (!trace || !out) {
  console.error('usage: node trace-devtools.mjs TRACE.json OUT.png');
  process.exit(2);
}
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';
const sleep = ms => new Promise(r => setTimeout(r, ms));

async function step(what, fn) {
  try {
    return await fn();
  } catch (e) {
    throw new Error(`trace-devtools: ${what}: ${e.message}`);
  }
}

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--hide-scrollbars'],
});
try {
  const page = await browser.newPage();
  page.on('pageerror', e => console.error('trace-devtools: page error:', e.message));
  await page.setViewport({width: 1400, height: 640});
  await step('opening DevTools\' trace viewer', async () => {
    await page.goto('devtools://devtools/bundled/trace_app.html', {waitUntil: 'load', timeout: 30000});
    await page.waitForSelector('pierce/#tab-timeline', {timeout: 30000});
  });
  await step('showing the Performance panel', () => page.evaluate(async () => {
    const UI = await import('./ui/legacy/legacy.js');
    await UI.ViewManager.ViewManager.instance().showView('timeline');
  }));
  await step(`loading ${trace}`, async () => {
    const input = await page.waitForSelector('pierce/input[type=file]', {timeout: 10000});
    await input.uploadFile(trace);
    await page.waitForFunction(async () => {
      const TL = await import('./panels/timeline/timeline.js');
      return TL.TimelinePanel.TimelinePanel.instance().hasActiveTrace();
    }, {timeout: 120000, polling: 500});
  });
  await sleep(1000);
  // The first trace opens a dialog of keyboard shortcuts: a click beside
  // it closes it. The sidebar (insights, annotations) takes room.
  await page.mouse.click(700, 600);
  await sleep(300);
  const hide = await page.$('pierce/button[aria-label="Hide sidebar"]');
  if (hide) {
    await hide.click();
    await sleep(300);
  }
  const picked = await step('finding a flow from node 0 to node 1', () => page.evaluate(async () => {
    const TL = await import('./panels/timeline/timeline.js');
    const panel = TL.TimelinePanel.TimelinePanel.instance();
    const flows = panel.getParsedTraceForLayoutTests().Flows.flows;
    const cross = flows.filter(f => f.length === 2 && f[0].pid === 0 && f[1].pid === 1);
    if (cross.length === 0) {
      throw new Error(`DevTools joined ${flows.length} flows, none from node 0 to node 1`);
    }
    // From the middle half of the run, the one whose sending slice is
    // longest: its name fits in the picture.
    const mid = cross.slice(Math.floor(cross.length / 4), Math.ceil(cross.length * 3 / 4));
    const f = mid.reduce((a, b) => (b[0].dur > a[0].dur ? b : a));
    window.charmgoPick = f;
    return {flows: flows.length, across: cross.length, from: f[0].name, to: f[1].name, ts: f[1].ts};
  }));
  console.log(`trace-devtools: DevTools joined ${picked.flows} flows, ${picked.across} from node 0 to node 1; ` +
      `showing ${picked.from} → ${picked.to}`);
  await step('expanding the tracks', () => page.evaluate(async () => {
    const TL = await import('./panels/timeline/timeline.js');
    const chart = TL.TimelinePanel.TimelinePanel.instance().flameChart.getMainFlameChart();
    for (let n = 0; n < 1000; n++) {
      const groups = chart.timelineData().groups;
      const i = groups.findIndex(g => !g.expanded && /^(node|PE) \d+/.test(g.name));
      if (i < 0) {
        return;
      }
      chart.toggleGroupExpand(i);
    }
    throw new Error('the tracks do not stay expanded');
  }));
  await step('zooming to the arrow and selecting its end', () => page.evaluate(async () => {
    const TL = await import('./panels/timeline/timeline.js');
    const TB = await import('./services/trace_bounds/trace_bounds.js');
    const [from, to] = window.charmgoPick;
    const min = from.ts - 400, max = to.ts + 1600; // microseconds
    TB.TraceBounds.BoundsManager.instance().setTimelineVisibleWindow({min, max, range: max - min});
    await new Promise(r => setTimeout(r, 500));
    TL.TimelinePanel.TimelinePanel.instance().select(TL.TimelineSelection.selectionFromEvent(to));
  }));
  await page.mouse.move(1399, 639); // no hover card over the tracks
  await sleep(1500);
  await page.screenshot({path: out});
  console.log(`trace-devtools: wrote ${out}`);
} finally {
  await browser.close();
}
