/** The few functions of libmime (mailparser's own MIME helper) that src/mime uses. */
declare module 'libmime' {
  interface StructuredHeader {
    value: string;
    params: Record<string, string>;
  }
  const libmime: {
    /** RFC 2047 encoded words to text. */
    decodeWords(value: string): string;
    /** A structured value with parameters (RFC 2045), RFC 2231 continuations and charsets decoded. */
    parseHeaderValue(value: string): StructuredHeader;
    /** A media type for a file name or extension, or application/octet-stream. */
    detectMimeType(filename: string): string;
  };
  export default libmime;
}
