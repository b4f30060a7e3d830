// Writes each SVG component of a React card bundle (an ES module whose exports are
// function components returning React.createElement("svg", ...)) as a plain SVG file.
// Usage: node scripts/react-svg-cards.mjs BUNDLE.js OUT_DIR
// The bundle's imports (react, babel's _extends helper) are replaced by a tiny
// createElement that writes markup, so nothing but Node.js itself is needed.
import fs from 'fs';

const [bundle, out] = process.argv.slice(2);
if (!bundle || !out) {
  console.error('usage: node react-svg-cards.mjs BUNDLE.js OUT_DIR');
  process.exit(2);
}
const escape = s => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
// React's camelCase props that SVG spells the same way; the others become kebab-case.
const CAMEL = new Set(['viewBox', 'preserveAspectRatio', 'patternUnits', 'gradientUnits',
  'gradientTransform', 'patternTransform', 'stdDeviation', 'textLength', 'lengthAdjust',
  'clipPathUnits', 'maskUnits', 'markerWidth', 'markerHeight', 'refX', 'refY',
  'startOffset', 'spreadMethod', 'patternContentUnits', 'maskContentUnits', 'baseFrequency',
  'numOctaves', 'kernelMatrix', 'filterUnits', 'primitiveUnits']);
const attribute = k => ({ className: 'class', xlinkHref: 'xlink:href', xmlSpace: 'xml:space',
  xmlnsXlink: 'xmlns:xlink' }[k]
  ?? (CAMEL.has(k) ? k : k.replace(/[A-Z]/g, m => '-' + m.toLowerCase())));
// Markup already written, told apart from text children (which are escaped).
class Markup { constructor(text) { this.text = text; } }
const React = {
  createElement(tag, props, ...children) {
    if (typeof tag === 'function') return tag({ ...props, children });
    let attrs = '';
    for (const [k, v] of Object.entries(props ?? {})) {
      if (v == null || k === 'children' || k.startsWith('aria') || k === 'title' || k === 'titleId') continue;
      const value = k === 'style' && typeof v === 'object'
        ? Object.entries(v).map(([p, q]) => `${attribute(p)}:${q}`).join(';') : v;
      attrs += ` ${attribute(k)}="${escape(value)}"`;
    }
    if (tag === 'svg' && !attrs.includes(' xmlns:xlink=')) {
      attrs += ' xmlns:xlink="http://www.w3.org/1999/xlink"';
    }
    const inner = children.flat(Infinity).filter(c => c != null && c !== false)
      .map(c => (c instanceof Markup ? c.text : escape(c))).join('');
    return new Markup(`<${tag}${attrs}>${inner}</${tag}>`);
  },
};
const source = fs.readFileSync(bundle, 'utf8')
  .replace(/^import .*$/gm, '')
  .replace(/export \{([^}]*)\};?/, (_, names) =>
    'return {' + names.replace(/(\w+) as (\w+)/g, '$2: $1') + '};');
const components = new Function('React', '_extends', source)(React, Object.assign);
fs.mkdirSync(out, { recursive: true });
let written = 0;
for (const [name, component] of Object.entries(components)) {
  const svg = component({});
  if (!(svg instanceof Markup) || !svg.text.startsWith('<svg')) continue;
  fs.writeFileSync(`${out}/${name}.svg`, svg.text);
  written += 1;
}
if (written === 0) {
  console.error(`${bundle}: no SVG components found`);
  process.exit(1);
}
console.log(`${written} SVG files written to ${out}`);
