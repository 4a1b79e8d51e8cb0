// Whether the workspace is trusted (the client's initialize options say): an untrusted workspace is
// neither indexed nor completed. The server sets it once it is known; the features read it per call.
export class Trust {
  private value = true;

  get trusted(): boolean {
    return this.value;
  }

  set(trusted: boolean): void {
    this.value = trusted;
  }
}
