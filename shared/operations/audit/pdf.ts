// The audit PDF: the selected rows as their CSV lines, in an embedded Unicode font, each page's footer carrying the digest over all rows.
import { join } from 'node:path';
import type * as Fontkit from 'fontkit';
import type PDFKit from 'pdfkit';
import { projectRoot } from '../../kernel/paths.js';
import { auditCsvLine, AUDIT_COLUMNS, rowsDigest } from './export.js';
import type { AuditRow } from './log.js';

/**
 * The embedded fonts, both committed in fonts/ beside this file with their licences, tried in order for each character:
 * DejaVu Sans (Latin, Greek, Cyrillic, Arabic, Hebrew, Armenian, Georgian, symbols…), then Noto Sans SC Regular, the
 * whole font, not a subset, since rows hold tenants' text (CJK ideographs, kana, fullwidth forms). The PDF standard
 * fonts would cover Latin-1 only.
 */
const FONT_FILES = (): { name: string; file: string }[] => {
  const dir = join(projectRoot(), 'shared', 'operations', 'audit', 'fonts');
  return [
    { name: 'dejavu', file: join(dir, 'DejaVuSans.ttf') },
    { name: 'noto-sc', file: join(dir, 'NotoSansSC-Regular.ttf') },
  ];
};

interface LoadedFont {
  name: string;
  file: string;
  has(codePoint: number): boolean;
}
let loaded: LoadedFont[] | undefined;

/**
 * pdfkit and fontkit, imported on the first export: together they take a few hundred ms to load, paid otherwise by
 * every process (and every test) that builds the API, although few ever render a PDF.
 */
let libraries: Promise<{ fontkit: typeof Fontkit; PDFDocument: typeof PDFKit }> | undefined;
const pdfLibraries = () =>
  (libraries ??= Promise.all([import('fontkit'), import('pdfkit')]).then(([fontkit, pdfkit]) => ({ fontkit, PDFDocument: pdfkit.default })));

/** Opens the fonts once per process (Noto Sans SC is ~10 MB) to know which characters each covers. */
function fonts(fontkit: typeof Fontkit): LoadedFont[] {
  loaded ??= FONT_FILES().map(({ name, file }) => {
    const font = fontkit.openSync(file) as Fontkit.Font;
    return { name, file, has: (cp: number) => font.hasGlyphForCodePoint(cp) };
  });
  return loaded;
}

/** Splits text into runs each drawn with the first font that has its characters (the first font when none has one). */
function fontRuns(list: readonly LoadedFont[], text: string): { font: string; text: string }[] {
  const runs: { font: string; text: string }[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    const font = (list.find((f) => f.has(cp)) ?? list[0]!).name;
    const last = runs[runs.length - 1];
    if (last && last.font === font) last.text += ch;
    else runs.push({ font, text: ch });
  }
  return runs;
}

const FONT_SIZE = 7;
const MARGIN = 36;
/** Room kept below the rows for the footer. */
const FOOTER_HEIGHT = 30;

export interface PdfHeading {
  tenant: string;
  generatedAt: Date;
  /** The selection, as the caller asked for it (window and filters). */
  selection: Record<string, string>;
}

/**
 * Renders the rows (at most PDF_MAX_ROWS, checked by the caller) and returns the finished document as a stream.
 * The digest is the SHA-256 over every row's CSV line concatenated (header excluded), so it is known before the first
 * page is laid out and is printed in every footer with the page number.
 */
export async function renderAuditPdf(rows: readonly AuditRow[], heading: PdfHeading): Promise<NodeJS.ReadableStream> {
  const { fontkit, PDFDocument } = await pdfLibraries();
  const list = fonts(fontkit);
  const digest = rowsDigest(rows);
  // The bottom margin keeps the footer's room free even when a long row flows onto the next page by itself.
  const doc = new PDFDocument({
    size: 'A4',
    layout: 'landscape',
    margins: { top: MARGIN, left: MARGIN, right: MARGIN, bottom: MARGIN + FOOTER_HEIGHT },
    bufferPages: true,
    info: { Title: `Mailpath audit export ${heading.tenant}`, Author: 'Mailpath' },
  });
  for (const f of list) doc.registerFont(f.name, f.file);
  const width = doc.page.width - 2 * MARGIN;
  /** Writes one paragraph, switching fonts within it where a character needs another font. */
  const paragraph = (text: string) => {
    const runs = fontRuns(list, text);
    runs.forEach((run, i) =>
      doc.font(run.font).text(run.text, i === 0 ? MARGIN : undefined, i === 0 ? doc.y : undefined, { width, continued: i < runs.length - 1 }),
    );
  };
  doc.fontSize(FONT_SIZE + 4);
  paragraph(`Mailpath audit export: ${heading.tenant}`);
  doc.fontSize(FONT_SIZE);
  const filters = Object.entries(heading.selection)
    .map(([k, v]) => `${k}=${v}`)
    .join('  ');
  paragraph(`Generated ${heading.generatedAt.toISOString()}; ${rows.length} rows; ${filters}`);
  paragraph(`Each row is its CSV line (${AUDIT_COLUMNS.join(',')}); the digest is sha256 over the rows' lines concatenated, each ending in CRLF.`);
  doc.moveDown();
  const bottom = () => doc.page.height - doc.page.margins.bottom;
  for (const row of rows) {
    const line = auditCsvLine(row).replace(/\r\n$/, '');
    // Measured in the first font: close enough to keep a row on one page (a row that still spills flows on by itself).
    const height = doc.font(list[0]!.name).heightOfString(line, { width });
    if (doc.y + height > bottom()) doc.addPage();
    paragraph(line);
  }
  if (rows.length === 0) paragraph('No audit rows match.');
  const range = doc.bufferedPageRange();
  for (let i = range.start; i < range.start + range.count; i++) {
    doc.switchToPage(i);
    // Writing below the bottom margin would make pdfkit open a new page: lift the margin while the footer is drawn.
    const margin = doc.page.margins.bottom;
    doc.page.margins.bottom = 0;
    doc
      .font(list[0]!.name)
      .text(`Page ${i + 1} of ${range.count} sha256 ${digest}`, MARGIN, doc.page.height - MARGIN - FONT_SIZE * 2, { width, lineBreak: false });
    doc.page.margins.bottom = margin;
  }
  doc.end();
  return doc;
}
