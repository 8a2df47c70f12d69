// The C API of a client-only build (KS_CLIENT_ONLY): every server function is there, and each
// refuses with KS_ERROR_UNSUPPORTED and a message naming the build.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include <kinesync/kinesync.h>

TEST(CapiClientOnly, ServerFunctionsRefuseNamingTheBuild) {
    ks_server_config cfg;
    ks_server_config_init(&cfg);
    ks_server* server = reinterpret_cast<ks_server*>(&cfg);  // never dereferenced: must not be
    ASSERT_EQ(ks_server_create(&cfg, &server), KS_ERROR_UNSUPPORTED);
    EXPECT_EQ(server, nullptr);
    EXPECT_NE(std::string(ks_last_error()).find("client-only"), std::string::npos) << ks_last_error();
    EXPECT_EQ(std::string(ks_result_name(KS_ERROR_UNSUPPORTED)), "not in this build");
    EXPECT_EQ(ks_server_end_tick(nullptr, nullptr), KS_ERROR_UNSUPPORTED);
    EXPECT_EQ(ks_server_poll(nullptr), KS_ERROR_UNSUPPORTED);
    size_t size = 99;
    const char* servers[] = {"127.0.0.1:40000"};
    EXPECT_EQ(ks_token_issue("00", servers, 1, 1, 60, nullptr, 0, &size), KS_ERROR_UNSUPPORTED);
    EXPECT_EQ(size, 0u);
    EXPECT_EQ(ks_server_client_count(nullptr), 0u);
}

TEST(CapiClientOnly, AClientOfANonexistentServerSaysNoAnswer) {
    ks_client_config cfg;
    ks_client_config_init(&cfg);
    cfg.host = "127.0.0.1";
    cfg.port = 9;  // discard: nobody answers
    cfg.timeout_s = 0.5;
    ks_client* c = nullptr;
    ASSERT_EQ(ks_client_create(&cfg, &c), KS_OK) << ks_last_error();
    ASSERT_EQ(ks_client_connect(c), KS_OK) << ks_last_error();
    // Waits on the client's state (its own 0.5 s timeout), with a generous deadline for a slow emulator.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (ks_client_get_state(c) != KS_CLIENT_DISCONNECTED && std::chrono::steady_clock::now() < deadline) {
        ks_client_update(c);
        std::this_thread::yield();
    }
    EXPECT_EQ(ks_client_get_state(c), KS_CLIENT_DISCONNECTED);
    EXPECT_EQ(ks_client_disconnect_code(c), KS_DISCONNECT_NO_ANSWER) << ks_client_disconnect_reason(c);
    ks_client_destroy(c);
}
