import { encode } from 'uqr';
import { html, type Html } from './html.js';

/** Light modules around the code (ISO/IEC 18004 asks for a quiet zone of 4). */
const QUIET_ZONE = 4;

/**
 * A QR code of `text` as inline SVG, drawn here on the server: the console runs no script and
 * loads nothing from elsewhere (its CSP), so the code is one path of dark squares with
 * presentation attributes only. Error correction M (15%) survives a phone camera's glare.
 */
export const qrCode = (text: string, label: string): Html => {
  const { data, size } = encode(text, { ecc: 'M', border: 0 });
  let path = '';
  data.forEach((row, y) => {
    // Runs of dark modules become one rectangle each: far fewer path commands than one per module.
    for (let x = 0; x < size; x += 1) {
      if (!row[x]) continue;
      let end = x;
      while (end + 1 < size && row[end + 1]) end += 1;
      path += `M${x + QUIET_ZONE} ${y + QUIET_ZONE}h${end - x + 1}v1h-${end - x + 1}z`;
      x = end;
    }
  });
  const side = size + 2 * QUIET_ZONE;
  return html`<svg class="qr" viewBox="0 0 ${side} ${side}" role="img" aria-label="${label}" shape-rendering="crispEdges"><rect width="${side}" height="${side}" fill="#fff"/><path fill="#000" d="${path}"/></svg>`;
};
