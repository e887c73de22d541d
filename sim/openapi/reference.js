// The API reference page's script: a filter over the operations, expand and
// collapse all, and a link to a schema or operation opens it.
'use strict';

function openTarget() {
  const id = decodeURIComponent(location.hash.slice(1));
  const el = id && document.getElementById(id);
  if (!el) return;
  for (let e = el; e; e = e.parentElement) {
    if (e.tagName === 'DETAILS') e.open = true;
  }
  el.scrollIntoView();
}

function filter(text) {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  for (const op of document.querySelectorAll('details.op')) {
    const hay = (op.dataset.method + ' ' + op.dataset.path + ' ' + op.dataset.operationId + ' ' + op.querySelector('summary').textContent).toLowerCase();
    op.classList.toggle('hidden', !words.every((w) => hay.includes(w)));
  }
  for (const tag of document.querySelectorAll('section.tag')) {
    tag.classList.toggle('hidden', !tag.querySelector('details.op:not(.hidden)'));
  }
}

function setAll(open) {
  for (const d of document.querySelectorAll('details.op')) d.open = open;
}

document.addEventListener('DOMContentLoaded', () => {
  document.getElementById('filter').addEventListener('input', (e) => filter(e.target.value));
  document.getElementById('expand').addEventListener('click', () => setAll(true));
  document.getElementById('collapse').addEventListener('click', () => setAll(false));
  window.addEventListener('hashchange', openTarget);
  openTarget();
});
