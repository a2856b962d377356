// Building the page without HTML parsing. Every string becomes a text node,
// so whatever a job printed or named shows as inert text: nothing here (or in
// the pages) hands a string to an HTML parser (tests/unit/ui_assets_test.cc looks).

// el('td', {class: 'num'}, 'text', otherNode, [more, children])
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'href') node.setAttribute('href', internalHref(v));
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else if (k === 'hidden' || k === 'disabled') node[k] = Boolean(v);
    else if (['type', 'name', 'value', 'placeholder', 'title', 'for', 'id', 'autocomplete', 'role'].includes(k))
      node.setAttribute(k, String(v));
    else throw new Error(`el: attribute ${k} is not allowed`);
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(node, c);
    else if (c instanceof Node) node.appendChild(c);
    else node.appendChild(document.createTextNode(String(c)));
  }
}

// Links go only to the dashboard's own pages ("#/..."); anything else (a
// javascript: URL a job printed, another origin) is refused loudly.
export function internalHref(href) {
  if (typeof href !== 'string' || !href.startsWith('#/')) throw new Error('el: only #/ links are made');
  return href;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

// A two-column table of label -> value (values as text or nodes).
export function fields(rows) {
  return el('table', { class: 'fields' },
    rows.filter(([, v]) => v !== undefined).map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', {}, v))));
}

export function table(headers, rows) {
  const empty = el('tr', {}, el('td', { class: 'muted' }, 'None.'));
  return el('table', { class: 'list' },
    el('thead', {}, el('tr', {}, headers.map((h) => el('th', {}, h)))),
    el('tbody', {}, rows.length ? rows : empty));
}

export function section(title, ...children) {
  return el('section', {}, el('h2', {}, title), ...children);
}
