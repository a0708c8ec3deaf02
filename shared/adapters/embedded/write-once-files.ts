import { randomUUID } from "node:crypto";
import { link, mkdir, open, readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { WriteOnceBlobs } from "#ports/blobs.ts";
import { AlreadyWrittenError } from "#ports/errors.ts";
import { boundedName } from "../bounded-name.ts";

/**
 * Write-once files under the store's home folder, each durable before its write resolves: the
 * text goes to a temporary file that is fsynced, then hard-linked into place (EEXIST when the
 * name is taken: never overwritten), then the folder is fsynced (and new folders' parents), so a
 * record committed after it never names a file a power loss could take.
 */
export class WriteOnceFiles implements WriteOnceBlobs {
  constructor(private readonly home: string) {}

  /**
   * File-name-safe form of an id: letters, digits, _ and - stay; everything else becomes %XX; a
   * long result is bounded (see `boundedName`).
   */
  segment(id: string): string {
    const escaped = Array.from(new TextEncoder().encode(id), (byte) => {
      const char = String.fromCharCode(byte);
      return /[A-Za-z0-9_-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    }).join("");
    return boundedName(id, escaped);
  }

  async putIfAbsent(key: string, text: string): Promise<void> {
    const path = join(this.home, key);
    const folder = dirname(path);
    const created = await mkdir(folder, { recursive: true });
    // New folders are entries of their parents: sync each parent up to the first that existed.
    if (created)
      for (let at = folder; at !== dirname(created); at = dirname(at)) await syncFolder(dirname(at));
    const temporary = `${path}.${randomUUID()}.tmp`;
    // Durable before anything names it: the text reaches the disk, then its directory entry does,
    // and only then does the caller commit the record that points at it.
    const file = await open(temporary, "wx");
    try {
      await file.writeFile(text);
      await file.sync();
    } finally {
      await file.close();
    }
    try {
      await link(temporary, path);
      await syncFolder(folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST")
        throw new AlreadyWrittenError(path, { cause: error });
      throw error;
    } finally {
      await rm(temporary, { force: true });
    }
  }

  async get(key: string): Promise<string | undefined> {
    try {
      return await readFile(join(this.home, key), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }
}

/** fsync of a folder, so a new entry in it survives a power loss. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
