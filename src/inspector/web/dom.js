// The page's one way to make elements. Strings always become text nodes (never HTML): whatever a
// model wrote is shown as text. Attributes are set one by one; a link's href must be http(s) or a
// link inside this page, anything else (javascript:, data:) is dropped.

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Control characters (ANSI escape codes among them) and bidi overrides, made visible. */
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

export function visible(text) {
  return String(text).replace(INVISIBLE, (c) => {
    const code = c.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return '\u2421';
    return `\u27e8U+${code.toString(16).toUpperCase().padStart(4, '0')}\u27e9`;
  });
}

export function safeHref(href) {
  const value = String(href);
  if (value.startsWith('#')) return value;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

function build(el, attrs, children) {
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'href') {
      const href = safeHref(value);
      if (href !== undefined) el.setAttribute('href', href);
    } else if (key === 'class') el.setAttribute('class', value);
    else if (key.startsWith('on')) continue;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else if (child instanceof Node) el.appendChild(child);
    else el.appendChild(document.createTextNode(visible(child)));
  }
}

/** An HTML element: h('p', { class: 'x' }, 'text', h('b', {}, 'bold')). */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element, the same way. */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** Replaces an element's children (strings as text; null, undefined and false skipped; arrays flattened). */
export function put(el, ...children) {
  clear(el);
  append(el, children);
  return el;
}

/** Adds children the same way. */
export function add(el, ...children) {
  append(el, children);
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}
