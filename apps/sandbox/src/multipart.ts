/**
 * A small multipart/form-data parser for the flow asset upload (Meta's `POST /{flow_id}/assets`
 * takes `name`, `asset_type` and a `file` part). Buffers the whole body: flow JSON is small.
 */
export interface MultipartPart {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer;
}

export function parseMultipart(body: Buffer, contentType: string): MultipartPart[] {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!m) throw new Error('multipart boundary missing');
  const boundary = Buffer.from('--' + (m[1] ?? m[2]).trim());
  const parts: MultipartPart[] = [];
  let pos = body.indexOf(boundary);
  while (pos !== -1) {
    let start = pos + boundary.length;
    if (body.subarray(start, start + 2).toString() === '--') break; // closing boundary
    if (body.subarray(start, start + 2).toString() === '\r\n') start += 2;
    const next = body.indexOf(boundary, start);
    if (next === -1) break;
    let end = next;
    if (body.subarray(end - 2, end).toString() === '\r\n') end -= 2;
    const chunk = body.subarray(start, end);
    const headerEnd = chunk.indexOf('\r\n\r\n');
    if (headerEnd !== -1) {
      const headers = chunk.subarray(0, headerEnd).toString('utf8');
      const disposition = /content-disposition:([^\r\n]*)/i.exec(headers)?.[1] ?? '';
      const name = /\bname="([^"]*)"/i.exec(disposition)?.[1];
      const filename = /\bfilename="([^"]*)"/i.exec(disposition)?.[1];
      const type = /content-type:\s*([^\r\n]*)/i.exec(headers)?.[1]?.trim();
      if (name !== undefined) parts.push({ name, filename, contentType: type, data: chunk.subarray(headerEnd + 4) });
    }
    pos = next;
  }
  return parts;
}
