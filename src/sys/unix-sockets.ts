// Unix domain sockets and their peers, from the kernel's sock_diag netlink interface (what `ss -x`
// reads). Node's child_process gives children socketpairs, not pipes, for stdio 'pipe': telling
// whether the far end of such a stdin still exists needs the peer, which no procfs file shows.
import { netlinkExchange } from './native.js';

const NETLINK_SOCK_DIAG = 4;
const SOCK_DIAG_BY_FAMILY = 20;
const NLM_F_REQUEST = 0x1;
const NLM_F_DUMP = 0x300;
const NLMSG_ERROR = 2;
const NLMSG_DONE = 3;
const AF_UNIX = 1;
const UDIAG_SHOW_PEER = 0x4;
const UNIX_DIAG_PEER = 2;
/** udiag_state of a connected socket (the kernel reuses TCP_ESTABLISHED). */
const STATE_ESTABLISHED = 1;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;

export interface UnixSocketInfo {
  /** SOCK_STREAM or SOCK_SEQPACKET, connected. */
  connected: boolean;
  /** Inode of the peer socket; 0 once the peer has been closed by everyone holding it. */
  peer: number;
  /** SOCK_STREAM 1, SOCK_DGRAM 2, SOCK_SEQPACKET 5. */
  type: number;
}

function request(): Buffer {
  const buffer = Buffer.alloc(16 + 24);
  buffer.writeUInt32LE(buffer.length, 0); // nlmsg_len
  buffer.writeUInt16LE(SOCK_DIAG_BY_FAMILY, 4); // nlmsg_type
  buffer.writeUInt16LE(NLM_F_REQUEST | NLM_F_DUMP, 6); // nlmsg_flags
  buffer.writeUInt32LE(1, 8); // nlmsg_seq
  buffer.writeUInt8(AF_UNIX, 16); // sdiag_family
  buffer.writeUInt32LE(0xffffffff, 20); // udiag_states: all
  buffer.writeUInt32LE(UDIAG_SHOW_PEER, 28); // udiag_show
  return buffer;
}

const align4 = (n: number) => (n + 3) & ~3;

/** Parses sock_diag replies into inode -> info. Exported for tests. */
export function parseUnixDiagReplies(replies: readonly Buffer[]): Map<number, UnixSocketInfo> {
  const sockets = new Map<number, UnixSocketInfo>();
  for (const reply of replies) {
    let at = 0;
    while (at + 16 <= reply.length) {
      const length = reply.readUInt32LE(at);
      const type = reply.readUInt16LE(at + 4);
      if (length < 16 || at + length > reply.length) break;
      if (type === NLMSG_DONE) return sockets;
      if (type === NLMSG_ERROR) throw new Error(`sock_diag error ${-reply.readInt32LE(at + 16)}`);
      if (type === SOCK_DIAG_BY_FAMILY && length >= 32) {
        const body = at + 16;
        const socketType = reply.readUInt8(body + 1);
        const state = reply.readUInt8(body + 2);
        const inode = reply.readUInt32LE(body + 4);
        let peer = 0;
        let attr = body + 16;
        while (attr + 4 <= at + length) {
          const attrLength = reply.readUInt16LE(attr);
          const attrType = reply.readUInt16LE(attr + 2);
          if (attrLength < 4) break;
          if (attrType === UNIX_DIAG_PEER && attrLength >= 8) peer = reply.readUInt32LE(attr + 4);
          attr += align4(attrLength);
        }
        const connected = state === STATE_ESTABLISHED && (socketType === SOCK_STREAM || socketType === SOCK_SEQPACKET);
        sockets.set(inode, { connected, peer, type: socketType });
      }
      at += align4(length);
    }
  }
  return sockets;
}

/**
 * Every unix socket of this network namespace with its peer, or undefined where native calls
 * (koffi) are not loaded. Call loadNative() first.
 */
export function readUnixSockets(): Map<number, UnixSocketInfo> | undefined {
  const replies = netlinkExchange(NETLINK_SOCK_DIAG, request(), (reply) => {
    // The dump ends with an NLMSG_DONE (or an error) message.
    let at = 0;
    while (at + 16 <= reply.length) {
      const length = reply.readUInt32LE(at);
      const type = reply.readUInt16LE(at + 4);
      if (type === NLMSG_DONE || type === NLMSG_ERROR) return true;
      if (length < 16) return true;
      at += align4(length);
    }
    return false;
  });
  return replies === undefined ? undefined : parseUnixDiagReplies(replies);
}
