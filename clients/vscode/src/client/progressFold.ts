/* nsys draws its progress bars by rewriting one terminal line with carriage
 * returns ("[1/8] [==   ] 30%\r[1/8] [=====] 60%\r..."); an output channel is not
 * a terminal and would print every frame. ProgressFold keeps, of each line, what a
 * terminal would finally show: the text after its last carriage return. */
export class ProgressFold {
  private partial = '';

  /** The complete lines of `chunk` (with what earlier chunks left unfinished), folded;
   *  a line still open waits for its end (or `flush`). */
  push(chunk: string): string {
    const text = this.partial + chunk;
    const nl = text.lastIndexOf('\n');
    this.partial = text.slice(nl + 1);
    return nl < 0 ? '' : fold(text.slice(0, nl + 1));
  }

  /** What is left of the last, unfinished line, folded. */
  flush(): string {
    const rest = fold(this.partial);
    this.partial = '';
    return rest;
  }
}

/** What a terminal finally shows of one line (no '\n'): the text after its last carriage
 *  return; trailing ones (CRLF) end the line without erasing it. */
export function lastFrame(line: string): string {
  const body = line.replace(/\r+$/, '');
  return body.slice(body.lastIndexOf('\r') + 1);
}

function fold(text: string): string {
  return text.split('\n').map(lastFrame).join('\n');
}
