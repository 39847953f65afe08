// `dom` and view(): the live view's script area, as scripts change it. Elements are handles
// on scry's model of that area (src/view/dom.rs); a change only updates the model, and the
// page gets the latest state at most ~30 times a second. Called once with the native object.
(function (N) {
  'use strict';
  const g = globalThis;
  const LINE = globalThis.__scryLine;
  const KEY = Symbol('scry.element');
  const ScryError = N.ScryError;
  const hidden = (obj, key, value) =>
    Object.defineProperty(obj, key, { value, enumerable: false, configurable: true, writable: true });
  const text = (v) => (v === null || v === undefined ? '' : String(v));
  // `backgroundColor` -> `background-color`; custom properties stay as written.
  const cssName = (p) => (p.startsWith('--') ? p : p.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase()));

  // Unknown members are errors naming the closest real one, as on scry's other objects. The
  // check sits at the end of the prototype chain, so the real members (found before it)
  // cost nothing: only a misspelt name reaches it.
  function strictEnd(label, names, prefix) {
    const refuse = (k) => {
      const near = N.nearest(k, names);
      return new ScryError(`${label} has no property '${k}'` + (near ? `; did you mean ${prefix}${near}?` : ''));
    };
    return new Proxy(Object.prototype, {
      get(t, k, receiver) {
        if (typeof k !== 'string' || k in t) return Reflect.get(t, k, receiver);
        if (k === 'toJSON' || k === 'then') return undefined;
        throw refuse(k);
      },
      set(t, k, v, receiver) {
        if (typeof k !== 'string' || k in t) return Reflect.set(t, k, v, receiver);
        throw refuse(k);
      },
    });
  }

  // ---- pixels -----------------------------------------------------------------------------
  function isMemory(v) {
    return v !== null && typeof v === 'object' && 'addr' in v && typeof v.u8 === 'function';
  }
  function toBytes(src) {
    if (src instanceof Uint8Array) return src;
    if (ArrayBuffer.isView(src)) return new Uint8Array(src.buffer, src.byteOffset, src.byteLength);
    if (src instanceof ArrayBuffer) return new Uint8Array(src);
    if (Array.isArray(src)) return Uint8ClampedArray.from(src);
    if (typeof src === 'string') {
      const hex = src.replace(/\s+/g, '');
      if (!/^([0-9a-fA-F]{2})*$/.test(hex)) throw new ScryError('putImageData: a string source must be hex bytes, as memory(addr).bytes(n) gives');
      const out = new Uint8Array(hex.length / 2);
      for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.substr(2 * i, 2), 16);
      return out;
    }
    throw new ScryError('putImageData(src, dx?, dy?, {w, h, format}?): src is a Uint8Array, an array of bytes, ' +
      'an ArrayBuffer, {data, width, height}, a hex string, or state.memory(addr)');
  }
  // One character per byte: how bytes cross into scry.
  function latin1(bytes) {
    let s = '';
    for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
    return s;
  }

  // ---- elements ------------------------------------------------------------------------------
  // Handles by key, and by id for dom.id(): a listener writing at every step asks for the same
  // id each time, and this answers without a native call. Anything that can delete an element
  // or move an id empties byId.
  const cache = new Map();
  const byId = new Map();
  const forgetIds = () => byId.clear();
  function handle(k) {
    if (k === null || k === undefined) return null;
    let h = cache.get(k);
    if (h === undefined) {
      if (cache.size >= 4096) cache.clear();
      h = Object.create(ElementProto);
      hidden(h, KEY, k);
      cache.set(k, h);
    }
    return h;
  }
  const keyOf = (v, what) => {
    const k = v !== null && typeof v === 'object' ? v[KEY] : undefined;
    if (k === undefined) throw new ScryError(`${what} must be a dom element (dom.id(...), dom.create(...))`);
    return k;
  };

  function styleOf(k) {
    const api = {
      setProperty: (name, value) => N.dom_set_style(k, String(name), text(value)),
      removeProperty: (name) => N.dom_set_style(k, String(name), ''),
      getPropertyValue: (name) => N.dom_style(k, String(name)),
    };
    return new Proxy(api, {
      // Every CSS property is there (empty when unset), as on a browser's style object.
      has(t, p) {
        return typeof p === 'string';
      },
      get(t, p) {
        if (typeof p !== 'string') return undefined;
        if (p in t) return t[p];
        if (p === 'cssText') return N.dom_attr(k, 'style') || '';
        return N.dom_style(k, cssName(p));
      },
      set(t, p, v) {
        if (typeof p !== 'string') return false;
        if (p === 'cssText') N.dom_set_attr(k, 'style', text(v));
        else N.dom_set_style(k, cssName(p), text(v));
        return true;
      },
    });
  }

  const ElementProto = {
    get textContent() {
      return N.dom_text(this[KEY]);
    },
    set textContent(v) {
      if (N.dom_set_text(this[KEY], text(v))) forgetIds();
    },
    get innerText() {
      return N.dom_text(this[KEY]);
    },
    set innerText(v) {
      if (N.dom_set_text(this[KEY], text(v))) forgetIds();
    },
    get innerHTML() {
      return N.dom_html(this[KEY]);
    },
    set innerHTML(v) {
      if (N.dom_set_html(this[KEY], text(v))) forgetIds();
    },
    get outerHTML() {
      return N.dom_outer(this[KEY]);
    },
    get id() {
      return N.dom_get_id(this[KEY]) || '';
    },
    set id(v) {
      forgetIds();
      N.dom_set_attr(this[KEY], 'id', text(v));
    },
    get tagName() {
      return N.dom_tag(this[KEY]).toUpperCase();
    },
    get className() {
      return N.dom_attr(this[KEY], 'class') || '';
    },
    set className(v) {
      N.dom_set_attr(this[KEY], 'class', text(v));
    },
    get style() {
      return styleOf(this[KEY]);
    },
    set style(v) {
      N.dom_set_attr(this[KEY], 'style', text(v));
    },
    get children() {
      return N.dom_children(this[KEY]).map(handle);
    },
    get parentElement() {
      return handle(N.dom_parent(this[KEY]));
    },
    get width() {
      return N.dom_size(this[KEY])[0];
    },
    set width(v) {
      N.dom_set_attr(this[KEY], 'width', text(v));
    },
    get height() {
      return N.dom_size(this[KEY])[1];
    },
    set height(v) {
      N.dom_set_attr(this[KEY], 'height', text(v));
    },
    setAttribute(name, value) {
      forgetIds();
      N.dom_set_attr(this[KEY], String(name), text(value));
    },
    getAttribute(name) {
      const v = N.dom_attr(this[KEY], String(name));
      return v === undefined ? null : v;
    },
    removeAttribute(name) {
      forgetIds();
      N.dom_remove_attr(this[KEY], String(name));
    },
    hasAttribute(name) {
      return N.dom_attr(this[KEY], String(name)) != null;
    },
    appendChild(child) {
      N.dom_append(this[KEY], keyOf(child, 'appendChild(child)'));
      return child;
    },
    // Elements are appended; strings become <span>s holding that text.
    append(...items) {
      for (const item of items) {
        if (typeof item === 'string' || typeof item === 'number') {
          const k = N.dom_create('span');
          N.dom_set_text(k, String(item));
          N.dom_append(this[KEY], k);
        } else {
          N.dom_append(this[KEY], keyOf(item, 'append(...elements)'));
        }
      }
    },
    remove() {
      forgetIds();
      cache.delete(this[KEY]);
      N.dom_remove(this[KEY]);
    },
    // Pixels into a canvas: src as toBytes() takes it, or target memory read directly.
    putImageData(src, dx = 0, dy = 0, opts) {
      const o = opts === undefined ? {} : opts;
      if (o === null || typeof o !== 'object') throw new ScryError('putImageData: options are {w, h, format}');
      let { w, h } = o;
      const format = o.format === undefined ? undefined : String(o.format);
      if (isMemory(src)) {
        N.dom_put_memory(this[KEY], src.addr, { dx, dy, w, h, format });
        return;
      }
      if (src !== null && typeof src === 'object' && 'data' in src && !ArrayBuffer.isView(src)) {
        if (w === undefined) w = src.width;
        if (h === undefined) h = src.height;
        src = src.data;
      }
      N.dom_put(this[KEY], latin1(toBytes(src)), { dx, dy, w, h, format });
    },
  };
  hidden(ElementProto, LINE, function () {
    const html = N.dom_outer(this[KEY]);
    return html.length > 300 ? html.slice(0, 300) + '…' : html;
  });
  Object.setPrototypeOf(ElementProto, strictEnd('element', Object.getOwnPropertyNames(ElementProto), ''));

  const domTarget = {
    // The element with this id; a new <div> at the end of the script area if none has it.
    id(id) {
      if (id === undefined) throw new ScryError('dom.id(id) needs an id');
      const name = typeof id === 'string' ? id : String(id);
      let h = byId.get(name);
      if (h === undefined) {
        h = handle(N.dom_id(name));
        if (byId.size >= 4096) byId.clear();
        byId.set(name, h);
      }
      return h;
    },
    create(tag) {
      return handle(N.dom_create(String(tag)));
    },
    canvas(id, w = 300, h = 150) {
      if (id === undefined) throw new ScryError('dom.canvas(id, w, h) needs an id');
      return handle(N.dom_canvas(String(id), Number(w), Number(h)));
    },
    clear() {
      forgetIds();
      cache.clear();
      N.dom_clear();
    },
  };
  hidden(domTarget, LINE, () => {
    const url = N.view_url();
    return `dom: ${N.dom_count()} elements in the script area; ` + (url ? `the page: ${url}` : 'no view open (start scry with --view PORT)');
  });
  Object.setPrototypeOf(domTarget, strictEnd('dom', Object.keys(domTarget), 'dom.'));
  const dom = Object.freeze(domTarget);

  hidden(g, 'dom', dom);
  hidden(g, 'view', () => {
    const url = N.view_url();
    return url === undefined ? null : url;
  });
});
