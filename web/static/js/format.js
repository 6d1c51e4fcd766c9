// Human units for the pages. Every function takes null (the warehouse does
// not know) and answers an en dash, never 0.

const DASH = '–';

function scaled(value, base, units, digits = 3) {
  if (value === null || value === undefined || Number.isNaN(value)) return DASH;
  let v = Math.abs(value);
  let i = 0;
  while (v >= base && i < units.length - 1) {
    v /= base;
    i++;
  }
  const sign = value < 0 ? '-' : '';
  // three significant figures: 1.23 GiB, 12.3 GiB, 123 GiB
  const text = i === 0 && Number.isInteger(v) ? String(v) : v.toPrecision(digits);
  return `${sign}${Number(text)} ${units[i]}`;
}

// Bytes in powers of 1024, as the console report writes them.
export function bytes(value) {
  return scaled(value, 1024, ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB']);
}

export function bytesPerSecond(value) {
  return value === null || value === undefined ? DASH : bytes(value) + '/s';
}

export function joules(value) {
  return scaled(value, 1000, ['J', 'kJ', 'MJ', 'GJ', 'TJ']);
}

export function watts(value) {
  return scaled(value, 1000, ['W', 'kW', 'MW']);
}

export function count(value) {
  if (value === null || value === undefined) return DASH;
  return Number(value).toLocaleString('en-US');
}

export function number(value, digits = 3) {
  if (value === null || value === undefined || Number.isNaN(value)) return DASH;
  if (Number.isInteger(value)) return count(value);
  return String(Number(value.toPrecision(digits)));
}

export function percent(value) {
  return value === null || value === undefined ? DASH : `${number(value, 3)} %`;
}

export function seconds(value) {
  if (value === null || value === undefined) return DASH;
  if (value < 1e-3) return `${number(value * 1e6)} µs`;
  if (value < 1) return `${number(value * 1e3)} ms`;
  if (value < 120) return `${number(value)} s`;
  const total = Math.round(value);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0 ? `${h} h ${String(m).padStart(2, '0')} min` : `${m} min ${String(s).padStart(2, '0')} s`;
}

export function nanoseconds(value) {
  return value === null || value === undefined ? DASH : seconds(value / 1e9);
}

// API times are ISO 8601 UTC; the pages show them in UTC too, so that what
// a user reads matches `vigil report` and the URLs they share.
export function time(iso) {
  if (!iso) return DASH;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z').replace(/Z$/, ' UTC');
}

// Time with its fraction of a second, for activities.
export function preciseTime(iso) {
  if (!iso) return DASH;
  return String(iso).replace('T', ' ').replace('Z', '');
}

export function epochSeconds(iso) {
  return new Date(iso).getTime() / 1000;
}

// The value of one metric's unit as the API names it (series' "unit").
export function byUnit(unit) {
  switch (unit) {
    case 'W':
      return watts;
    case 'J':
      return joules;
    case 'bytes':
      return bytes;
    case 'B/s':
      return bytesPerSecond;
    case '%':
      return percent;
    case 'ops/s':
      return (v) => (v === null || v === undefined ? DASH : `${number(v)} ops/s`);
    default:
      return (v) => number(v);
  }
}

// datetime-local inputs hold "YYYY-MM-DDTHH:MM[:SS]" without a zone; the
// pages label them UTC and send them to the API with a Z.
export function inputToIso(value) {
  if (!value) return '';
  return /[zZ]|[+-]\d\d:\d\d$/.test(value) ? value : value + 'Z';
}

export function isoToInput(value) {
  if (!value) return '';
  // epoch seconds in a URL are allowed by the API: show them as a date
  const d = /^\d+(\.\d+)?$/.test(value) ? new Date(Number(value) * 1000) : new Date(value);
  if (Number.isNaN(d.getTime())) return '';
  return d.toISOString().slice(0, 19);
}
