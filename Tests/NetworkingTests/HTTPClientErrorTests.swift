import Networking
import Testing

@Suite("HTTPClientError: transient or final, and one readable line")
struct HTTPClientErrorTests {
    @Test("transient: transport, refused, timeout; final: the rest", arguments: [
        (HTTPClientError.transport(url: "u", reason: "reset"), true, "cannot reach u: reset"),
        (.connectionRefused(url: "u"), true, "cannot reach u: connection refused"),
        (.timeout(url: "u", seconds: 10), true, "u did not answer within 10 s"),
        (.timeout(url: "u", seconds: 0.5), true, "u did not answer within 0.5 s"),
        (.responseTooLarge(url: "u", limit: 1024), false, "u answered with more than 1024 bytes; abandoned"),
        (.destinationRefused(url: "u", reason: "127.0.0.1 is a loopback address"), false, "refused to connect to u: 127.0.0.1 is a loopback address"),
        (.tooManyRedirects(url: "u", limit: 5), false, "u redirected more than 5 times"),
        (.cancelled, false, "cancelled"),
    ])
    func table(error: HTTPClientError, transient: Bool, description: String) {
        #expect(error.isTransient == transient)
        #expect(error.description == description)
    }
}
