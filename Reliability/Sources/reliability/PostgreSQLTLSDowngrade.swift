import Foundation
import OpenCoreData

/// A machine in the middle that strips TLS (`Reliability/run --postgres`): a loopback proxy
/// answers the client's request for TLS with "no TLS" itself (`TCPProxy.stripTLS`). A store whose
/// URL demands TLS (`tls=require`) must not open, and its client must send nothing after the
/// refusal (not even the startup message, which names the user and the database). The control,
/// `tls=disable` through the same proxy, must open: the refusals are the TLS demand's doing, not a
/// broken path.
enum PostgreSQLTLSDowngrade {
    static let scenario = "PostgreSQL: a TLS downgrade refused"

    static func run(rounds: Int, cluster: PostgreSQLServerFaults.Cluster) -> ScenarioResult {
        var result = ScenarioResult(scenario: scenario, rounds: 0)
        let started = Date()
        var refused = 0
        for round in 0..<rounds {
            do {
                guard let serverPort = cluster.url.port else { throw Failure("the cluster's URL has no port") }
                let proxy = try TCPProxy(upstreamPort: serverPort)
                defer { proxy.stop() }
                proxy.stripTLS()
                do {
                    _ = try PostgreSQLServerFaults.open(try url(cluster, port: proxy.port, tls: "require"))
                    result.record(Failure("the store opened with tls=require through a proxy that refused TLS"), round: round)
                } catch {
                    refused += 1
                }
                if proxy.tlsRequestsRefused == 0 {
                    result.record(Failure("the client never asked for TLS, so no downgrade was tried"), round: round)
                }
                if proxy.bytesSentAfterRefusedTLS > 0 {
                    result.record(Failure("the client sent \(proxy.bytesSentAfterRefusedTLS) bytes in clear after TLS was refused"), round: round)
                }
                // The control: without TLS demanded, the same path works.
                _ = try PostgreSQLServerFaults.open(try url(cluster, port: proxy.port, tls: "disable"))
            } catch {
                result.record(error, round: round)
            }
            result.rounds += 1
        }
        result.details["opens refused"] = String(refused)
        result.seconds = Date().timeIntervalSince(started)
        return result
    }

    private static func url(_ cluster: PostgreSQLServerFaults.Cluster, port: Int, tls: String) throws -> URL {
        guard var components = URLComponents(url: cluster.url, resolvingAgainstBaseURL: false) else { throw Failure("bad URL \(cluster.url)") }
        components.port = port
        components.queryItems = [URLQueryItem(name: "schema", value: "reliability_tls"), URLQueryItem(name: "tls", value: tls),
                                 URLQueryItem(name: "connect_timeout", value: "2")]
        guard let url = components.url else { throw Failure("bad URL \(cluster.url)") }
        return url
    }
}
