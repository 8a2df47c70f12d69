#pragma once
// The real server loop in-process, without sockets: a simulated world of N characters stepped at
// 60 Hz and published to a net::Server whose datagrams go to M ClientSessions (handshake,
// skeletons, snapshots decoded, acks, pings) and whose replies come back through Server::inject,
// client i being 1 + i % 6 ticks away each way (17-100 ms). Server and clients keep the ticks'
// time, not the wall clock's. The capacity benchmark times its ticks; tests read what each client
// was sent.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <asio.hpp>

#include "client/src/session.h"
#include "common/src/util/worker_pool.h"
#include "programs/server/sim/clip_library.h"
#include "programs/server/sim/world.h"
#include "server/src/net/server.h"

namespace ks {

struct InProcessRigConfig {
    int characters = 16, clients = 1;
    bool share_encodings = true;
    int worker_threads = -1;         // the server's and the world's (-1: one per other core, 0: none)
    float bandwidth_bps = 256000.0f;  // per client
    float snapshot_hz = 30.0f;        // ticks are 60 Hz; a whole number dividing 60
    // The clients hold every skeleton already (as from an earlier session's skeleton cache) and
    // offer them in the handshake: the server sends references instead of definitions.
    bool clients_hold_skeletons = false;
    // Tests: sees every datagram the server sends (the client's index, the datagram decoded) and
    // drops it (never delivered) when it returns true.
    std::function<bool(int, const net::DecodedPacket&)> drop_to_client = {};
};

class InProcessRig {
public:
    // One datagram the server sent a client: the tick it left at, its wire bytes (payload plus
    // the IPv4 and UDP headers) and what it carried.
    struct Sent {
        int tick = 0;
        size_t wire_bytes = 0;
        net::MessageType type = net::MessageType::NONE;
    };

    InProcessRig(const ClipLibrary& lib, const InProcessRigConfig& cfg);
    // Tick n: the clients read what has arrived and answer (not timed), then the server's tick
    // (the world's step and publish). Returns the server's part in milliseconds.
    double tick(int n);
    // The clients' side of the last tick (their datagrams, decoding, assembling poses; not the
    // server's handling of their replies), in ms.
    double clients_ms() const { return clients_ms_; }
    const net::Server& server() const { return *server_; }
    const std::vector<std::unique_ptr<ClientSession>>& sessions() const { return sessions_; }
    // Every datagram sent to client i (port 20000 + i), in order.
    const std::vector<Sent>& sent_to(int client) const;

private:
    struct InFlight {
        int due;
        std::vector<uint8_t> bytes;
    };
    struct Reply {
        int due;
        uint16_t port;
        std::vector<uint8_t> bytes;
    };
    static int delay(int client) { return 1 + client % 6; }
    void exchange(double now);
    net::TickFrame frame() const;

    World world_;
    WorkerPool pool_;
    InProcessRigConfig cfg_;
    asio::io_context io_;
    net::Roster roster_;
    std::vector<std::unique_ptr<ClientSession>> sessions_;
    std::map<uint16_t, std::vector<InFlight>> to_client_;  // by client port
    std::map<uint16_t, std::vector<Sent>> sent_;           // by client port
    std::vector<Reply> replies_;
    int tick_now_ = 0;
    double clients_ms_ = 0.0;
    // Last, so destroyed first: ~Server says goodbye through the transport, which writes to
    // to_client_ and sent_ and reads tick_now_, and it reads roster_ until then.
    std::unique_ptr<net::Server> server_;
};

}  // namespace ks
