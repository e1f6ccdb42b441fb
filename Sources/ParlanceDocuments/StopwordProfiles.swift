/// Frequent function words per Latin-script language, used by `LanguageDetector`.
/// Each list favours words that are common and, where possible, distinctive.
enum StopwordProfiles {
    static let profiles: [(code: String, words: Set<String>)] = [
        ("en", words("the and is are was were of to in that it you this with for on have be not but what they we he she at my your from there about would can just so do if an or will has had been which their our me i it's don't"))
        ,
        ("fr", words("le la les de des du un une et est que qui dans pour pas sur ce cette il elle nous vous ils avec mais ou au aux sont être très plus je tu on mon ma mes son sa ses leur comme fait bien aussi tout c'est j'ai qu l d j c n ça y a été"))
        ,
        ("de", words("der die das und ist nicht ein eine zu den dem mit sich auf für von ich du wir ihr sie es auch aber wie noch nach bei aus wenn oder sind war hat haben werden wird kann dass einen einem schon nur sehr mehr im uns"))
        ,
        ("it", words("il lo la gli le di del della che è e un una per non sono con ma come anche più questo questa molto ho hai ha abbiamo perché io tu lui lei noi voi loro nel nella alla al dei delle si mi ti ci sei"))
        ,
        ("es", words("el la los las de del que y en un una es por con no para se lo como más pero sus su le ya muy también este esta hay estoy está son yo tú nosotros ellos eso todo cuando qué porque pues al"))
        ,
        ("pt", words("o a os as de do da dos das que e em um uma é não para com por mais mas no na nos nas se eu você ele ela nós eles muito também isso isto está são foi tem ao aos pelo pela então já"))
        ,
        ("nl", words("de het een en van is dat niet op te ik je zijn met voor maar ook er aan als bij nog wel naar dan om hij zij wij ze we heeft hebben was wat dit die deze geen kan heel veel moet worden"))
        ,
        ("sv", words("och att det som en ett är på av för med till den har inte om jag du vi de men var han hon sig så kan från eller när också mycket efter vad här där bara nu skulle ska"))
        ,
        ("da", words("og at det som en et er på af for med til den har ikke om jeg du vi de men var han hun sig så kan fra eller når også meget efter hvad her der bare nu skal være havde mig dig noget dette bliver hvordan"))
        ,
        ("nb", words("og å det som en et er på av for med til den har ikke om jeg du vi de men var han hun seg så kan fra eller når også mye etter hva her der bare nå skal være hadde meg deg ikkje at veldig noe dette blir hvordan dere noen opp"))
        ,
        ("tr", words("ve bir bu da de için ile çok ne o ben sen biz siz onlar var yok gibi daha ama değil mi mı mu mü olarak kadar şey her diye ki en sonra çünkü nasıl şimdi evet hayır"))
        ,
        ("vi", words("và là của có không được một những các cho trong với này người đã để khi như cũng tôi bạn chúng ta anh em thì mà rất đó về ra làm sẽ vì nhưng nó họ đi"))
        ,
        ("pl", words("i w na z nie się to że jest do jak ale co tak po o od za czy jestem są był była tylko już bardzo jego jej ich mnie może przez dla tego który która"))
        ,
        ("ro", words("și în de la cu pe nu este o un care ce mai din pentru sunt am au fost că dar sau foarte acest această eu tu el ea noi voi ei"))
        ,
        ("fi", words("ja on ei se että oli ovat mutta kun minä sinä hän me te he tämä tuo niin myös kuin jos vain hyvin olla ole mitä joka nyt"))
        ,
        ("id", words("dan yang di ke dari ini itu dengan untuk tidak ada saya kamu kami mereka akan juga sudah bisa karena atau pada dalam seperti sangat lebih jika apa"))
        ,
    ]

    /// word → indices of the profiles that list it.
    static let index: [String: [Int]] = {
        var m: [String: [Int]] = [:]
        for (k, p) in profiles.enumerated() { for w in p.words { m[w, default: []].append(k) } }
        return m
    }()

    /// Letters that point strongly at one language, each worth half a stopword hit.
    static let letterHints: [Unicode.Scalar: String] = {
        var m: [Unicode.Scalar: String] = [:]
        for s in "ạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹđơư".unicodeScalars { m[s] = "vi" }
        for s in "ığş".unicodeScalars { m[s] = "tr" }
        for s in "ß".unicodeScalars { m[s] = "de" }
        for s in "ñ¿¡".unicodeScalars { m[s] = "es" }
        for s in "ãõ".unicodeScalars { m[s] = "pt" }
        for s in "œ".unicodeScalars { m[s] = "fr" }
        for s in "ąęłńśźż".unicodeScalars { m[s] = "pl" }
        for s in "ăâțș".unicodeScalars { m[s] = "ro" }
        return m
    }()

    private static func words(_ s: String) -> Set<String> {
        Set(s.split(separator: " ").map(String.init))
    }
}
