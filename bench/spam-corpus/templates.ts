/**
 * The corpus templates, by class and kind. Each kind has several templates written apart; the LAST
 * template of every kind is held out of training (see corpus.ts), so the unseen set holds wording
 * the filter never learned. Syntax: `{a|b}` picks one, `{slot}` fills from slots.ts.
 */

export type CorpusClass = 'spam' | 'ham' | 'newsletter';

export interface Kind {
  cls: CorpusClass;
  kind: string;
  templates: string[];
}

const HI = '{Hi|Hello|Hey|Good day|Dear Sir/Madam|Greetings|Hi there|Hello team|Dear owner}';
const BYE = '{Best regards|Regards|Thanks|Cheers|Kind regards|Sincerely|Best}';

export const KINDS: Kind[] = [
  // ---------------------------------------------------------------- spam
  {
    cls: 'spam',
    kind: 'seo',
    templates: [
      `${HI},\n\nI {was checking|analyzed|audited} {site} and {noticed|found} it is not ranking on the first page of Google for "{kw}". {We can|Our team will} get you to the top {in 30 days|within weeks|guaranteed} with our {white hat|proven|affordable} SEO {services|package}.\n\n{Reply for a free audit|Get your free report here: {spamurl}|See our packages: {spamurl}}\n\n${BYE},\n{full}\nSEO {Specialist|Manager|Consultant}`,
      `{Want|Need} more {traffic|customers|leads}? We {build|offer} {high DA|high authority|DA 50+|premium} backlinks{| and citations} that {boost|push} {site} {up the rankings|to page 1}. {{num}0 links for {money}|Packages from {money}|Only {money} per month}. {Order now|Check it out|Details}: {spamurl}`,
      `{Hello|Hi}! Your {domain authority|DA|Moz score} is {low|only {num}}. Google {penalizes|ignores} sites {like yours|with few backlinks}. Our {monthly|one-time} {link building|off-page SEO} plan {fixes this|gets you ranking} - {{num}00 contextual backlinks|guaranteed top 10 positions|real organic traffic}. {WhatsApp|Skype|Telegram}: {phone} or {spamurl}`,
    ],
  },
  {
    cls: 'spam',
    kind: 'crypto',
    templates: [
      `{Earn|Make|Get} {money} {per day|a week|daily} {with|trading} {coin}! {Our AI trading bot|Our platform|This secret strategy} {doubles|triples} your deposit {in 24 hours|in a week|guaranteed}. {Start with|Minimum deposit} {money}. {Join now|Register|Sign up}: {spamurl}`,
      `{Congratulations|Dear user}, {you have|your wallet has} {received|been credited with} {0.{num}|{num}.5} {coin}. To {withdraw|claim} your {funds|reward}, {verify your wallet|complete the withdrawal} at {spamurl} {within 24 hours|before it expires}.`,
      `{Hi|Hello}, I am an {investment manager|crypto expert|account manager} and I {made|helped clients make} {money} {last month|this week} with {coin} {mining|staking|arbitrage}. {Passive income|Financial freedom} is {possible|real}. {Contact me on WhatsApp {phone}|Write me on Telegram @{first}{big}|Visit {spamurl}} {for details|to start}.`,
    ],
  },
  {
    cls: 'spam',
    kind: 'pharma',
    templates: [
      `{Buy|Order|Cheap} {pill} {online|without prescription|no prescription needed} {- best price|at {price} per pill|from {price}}. {Fast|Discreet|Worldwide} {shipping|delivery}{| to your door}. {pill}, {pill} {and more|also available}: {spamurl}`,
      `{Men's health|Pharmacy} {special|sale}: {pill} {pct} off {today only|this week}! {No doctor visit|No prescription}, {100% discreet|secure checkout}. {Order|Shop} here {spamurl}`,
      `Hello, {our online|licensed|Canadian} pharmacy {offers|sells} {generic|brand} {pill} and {pill} {at the lowest prices|for less}. {Bonus pills with every order|Free pills with every order}. {Visit|Go to} {spamurl} {now|today}.`,
    ],
  },
  {
    cls: 'spam',
    kind: 'loans',
    templates: [
      `{Need cash fast|Need money|Bad credit}? {Get|Receive} {a loan of |}{money} {today|in 24 hours|in minutes} - {no credit check|bad credit OK|guaranteed approval}. {Apply now|Apply online}: {spamurl}`,
      `{Dear|Hello} {business owner|sir}, {we offer|your business qualifies for} {working capital|a business loan|funding} {up to|of} {money} {at {num}% interest|with low rates}. {Approved in 24h|No collateral}. {Call|Text} {phone} or {apply at|visit} {spamurl}`,
      `Are you in {debt|financial trouble}? {Consolidate|Clear} {your debt|all your loans} {today|now} and {save|pay} {money} {less|every month}. {Private lender|Trusted lender} {offering|giving} loans at {num}% {to individuals and companies|worldwide}. Contact {us|me}: {spamurl}`,
    ],
  },
  {
    cls: 'spam',
    kind: 'invoice',
    templates: [
      `{Invoice|Payment request|Bill} {order} {is attached|is due|for your account}. {Amount due|Total}: {money}. {Please|Kindly} {view and pay|review} {the invoice|your invoice} {here|at} {spamurl} {to avoid late fees|within 48 hours|to avoid suspension}.`,
      `{Your|The} {payment|subscription renewal} of {money} {could not be processed|has failed|was declined}. {Update your billing details|Confirm your card} {at|here} {spamurl} {or your service will be suspended|to avoid interruption}. Ref {order}`,
      `{Hello|Dear customer}, {we have|there is} an {outstanding|unpaid|overdue} {balance|invoice} of {money} on {your account|order {order}}. {Download|Open} the {statement|PDF invoice} {here|below}: {spamurl}. {Billing Department|Accounts Receivable}`,
    ],
  },
  {
    cls: 'spam',
    kind: 'adult',
    templates: [
      `{Hot|Lonely|Sexy} {girls|singles|women} {in your area|near you|in {city}} {want to meet|are waiting|are online now}. {See photos|Chat now|Free registration}: {spamurl}`,
      `{Hi|Hey} {dear|handsome}, I am {Anastasia|Irina|Olga|Natasha}, {{num}2|2{num}} years old. I saw your {profile|photo} and {want to|would love to} {meet|talk}. {My photos|Write me} here {spamurl} {kisses|xoxo}`,
      `{Adult dating|Casual dating|XXX webcams} - {no strings attached|100% free|real girls}. {Sign up|Join} {in one minute|tonight} at {spamurl} {and get|with} {num} free {credits|minutes}.`,
    ],
  },
  {
    cls: 'spam',
    kind: 'guestpost',
    templates: [
      `${HI},\n\nI {am|'m} {first} {from|with} {sitename}. {I would like to|Can I} {contribute|write} a {high quality|unique|well-researched} guest post for {site}{| on a topic relevant to your readers}. {In return I only ask for|All I need is} {one|a} {do-follow|dofollow} link {back to my client|to our site}. {We can also pay|Happy to pay} {money} {per post|for the placement}.\n\n${BYE}, {first}`,
      `{Hello|Hi}, do you accept {sponsored posts|paid guest posts|link insertions}? {We|My agency} {have|has} clients in {casino|crypto|CBD|finance|health} {niche|sector} and pay {money} {per article|per link}. Please share your {price list|rates} {and DA|and traffic stats}.`,
      `${HI}, I'm {full}, an {outreach|content} {manager|specialist} at {sitename}. We {love|enjoyed} your {blog|article} and {would love to|want to} {send you|publish} a {free|unique} article {with one link|with a natural link} to our {partner|client}. {What do you charge|Is there a fee}? {Thanks in advance|Looking forward}.`,
    ],
  },
  {
    cls: 'spam',
    kind: 'phishing',
    templates: [
      `{Your|Dear user, your} {mailbox|email account|account} {will be|is going to be} {suspended|deactivated|closed} {in 24 hours|today}. {Verify your identity|Confirm your password|Re-validate your account} {now|immediately} {at|here} {spamurl}`,
      `{Security alert|Unusual sign-in activity}: {someone|an unknown device} {tried to access|signed in to} your account from {city}. {If this was not you|To secure your account}, {click|log in} {here|at} {spamurl} {and confirm your details|to reset your password}.`,
      `{Your package|Your parcel|Shipment {order}} {could not be delivered|is on hold}. {Pay the customs fee|Confirm your address} of {price} {at|here} {spamurl} {to reschedule delivery|within 48 hours}.`,
    ],
  },
  {
    cls: 'spam',
    kind: 'webdesign',
    templates: [
      `${HI},\n\nI {visited|came across|was browsing} {site} and {noticed|saw} {a few|some} {issues|problems|errors} {with the design|that hurt conversions|on mobile}. {I am|We are} a {web design|web development} {agency|team} and {can|could} {redesign|rebuild|fix} it {for|starting at} {money}. {Can I send you a quote|Shall I send you a mockup|Interested}?\n\n${BYE},\n{full}`,
      `{Hi|Hello}, {is|are} {site} {mobile friendly|loading fast|ADA compliant}? {Mine check|My quick check} {says no|shows a score of {num}/100}. {We build|I create} {modern|stunning|responsive} websites {on WordPress|with Shopify|on any platform} {at affordable prices|from {money}}. {Reply YES|Reply to this message} {for a free demo|and I will send examples}.`,
      `Hey, {first} here - I {make|create} {short|explainer|animated} {videos|promo videos} {for businesses like yours|for websites}. {I noticed|I saw} {site} {has no video|could use a video}. {Samples|My portfolio}: {spamurl} - {only|from} {money}. {Eric|Mike|Kate}`,
    ],
  },
  {
    cls: 'spam',
    kind: 'cyrillic',
    templates: [
      `{Здравствуйте|Добрый день}! {Предлагаем|Продаем} {базы данных|прогон сайта|рекламу} {для вашего бизнеса|по лучшей цене}. {Звоните|Пишите} {phone} {или|либо} {spamurl}`,
      `{Займы|Кредиты} {онлайн|без проверки} {до|от} {num}0 000 {рублей|руб}! {Одобрение|Решение} {за 5 минут|сразу}. {Подробнее|Заходите}: {spamurl}`,
      `{Привет|Здравствуйте}! {Ваш сайт|Сайт} {можно|нужно} {продвинуть|раскрутить} в {ТОП|топ 10} {Яндекса|Google} {за месяц|быстро}. {Цена|Стоимость} {от|всего} {price}. {Контакты|Подробности}: {spamurl}`,
    ],
  },
  {
    cls: 'spam',
    kind: 'cjk',
    templates: [
      `{免费|限时}{注册|领取}{送|赠送}{num}88{元|积分}！{最新|热门}{娱乐|投资}平台，{日赚|每天收入}{big}元。{点击|访问} {spamurl}`,
      `{代开发票|办理证件|网站推广}，{诚信|专业}{服务|办理}，{价格优惠|全国可做}。{微信|电话}：{phone}`,
      `{副業|在宅ワーク}で{月収|日給}{big}万円！{簡単|スマホだけ}で{誰でも|今すぐ}{稼げる|始められる}。{詳しくは|登録は}こちら {spamurl}`,
    ],
  },
  {
    cls: 'spam',
    kind: 'linklist',
    templates: [
      `{spamurl}\n{spamurl}\n{spamurl}\n{spamurl}{|\n{spamurl}}`,
      `{best|cheap|top} {pill} {spamurl} {buy|order} {coin} {spamurl} {loans|casino} {spamurl} {seo|backlinks} {spamurl}`,
      `{good|nice|great} {site|post|article} {spamurl} {thanks|thx} {spamurl} {see also|more} {shorturl} {spamurl}`,
    ],
  },
  {
    cls: 'spam',
    kind: 'bbcode',
    templates: [
      `[url={spamurl}]{cheap|buy} {pill}[/url] [url={spamurl}]{online casino|slots}[/url] [url={spamurl}]{payday loans|fast cash}[/url]`,
      `<a href="{spamurl}">{best|cheap} {pill} online</a> <a href="{spamurl}">{casino bonus|free spins}</a>{| <b>{order now|buy now}</b>}`,
      `{nice|good} {site|blog} [b]{check this|look}[/b] [url={spamurl}]{spamhost}[/url] [img]{spamurl}[/img]`,
    ],
  },
  {
    cls: 'spam',
    kind: 'prize',
    templates: [
      `{CONGRATULATIONS|Congratulations}! You {have been selected|are our lucky winner} {to receive|for} {a free {product}|an iPhone|a {money} gift card}. {Claim|Collect} your {prize|reward} {now|within 24 hours}: {shorturl}`,
      `{Dear beneficiary|Dear friend}, {I am|This is} {barrister|Dr.} {full} {from|of} {the bank|the foundation}. {A fund of|An inheritance of} {money} {has been|was} {left|assigned} in your name. {Reply with your full name and phone|Contact me urgently} {to proceed|for the transfer}.`,
      `You {won|have won} {our|the} {weekly|annual} {sweepstakes|draw}! {Your ticket|Ticket {order}} {matched|won} {money}. {To receive the payment|Before we can pay}, {confirm|pay the processing fee of {price}} {at|here} {shorturl}`,
    ],
  },
  // ---------------------------------------------------------------- ordinary messages
  {
    cls: 'ham',
    kind: 'question',
    templates: [
      `${HI}, {do you|would you} {ship|deliver} to {city}{| and how long does it take}? I {am interested in|would like to order|was looking at} the {product}{| in blue| in the larger size}. {Thanks|Thank you|Cheers}, {first}`,
      `{Hello|Hi}! {Quick question|Just a question}: {is the|are your} {product} {still available|back in stock|available in other colours}? {I saw it on your|It was on the} {shop|website} {last week|yesterday} {for|at} {price}. {Thanks!|Thank you.|Many thanks, {first}}`,
      `{Hi|Good morning}, {what are your opening hours|are you open} on {day}{| during the holidays}? {I'd like to|We want to} {come by|drop in} {with {num} friends|after work|around {time}}. {Thanks a lot|Thank you}!`,
      `{Hello|Hi there}, {can I|is it possible to} {change|cancel} my order {order}? {I ordered|I picked} the wrong {size|colour|item}{| by mistake}. {You can reach me|Call me} at {phone}{| any time}. {Thanks|Regards}, {full}`,
    ],
  },
  {
    cls: 'ham',
    kind: 'support',
    templates: [
      `{Hi|Hello}, {my|the} {product} {arrived|came} {damaged|broken|with a scratch} {yesterday|today|on {day}}. {Order|Order number} {order}. {Can you|Could you please} {send a replacement|help|refund me}? {I can send photos|Photos attached on request}. {first}`,
      `{Hello|Hi team}, I {can't|cannot} {log in|sign in} to my account {since {day}|after the update|on my phone}. {I tried|I already tried} {resetting my password|another browser} {but|and} {nothing works|it still fails}. {My username is|The account is} {first}{big}. {Thanks for your help|Thank you}!`,
      `{Hi|Dear support}, {the download link|the link in my receipt} for {my order|order {order}} {doesn't work|gives an error|has expired}. {Could you|Can you} {resend it|send a new one}? {It was|I paid} {price}. {Best|Thanks}, {full}`,
      `{Hello|Hi}, {I was charged twice|I see two payments} for {order {order}|my subscription} {this month|on {date}}. {Can you look into it|Please check and refund one}? {My phone|Reach me at} {phone}. {Regards|Thanks}, {full}`,
    ],
  },
  {
    cls: 'ham',
    kind: 'booking',
    templates: [
      `${HI}, I {would like to|want to|'d like to} {book|reserve} a table for {num} {on|this} {day} {at|around} {time}{|, ideally by the window|, we have a baby with us}. {My number is|Phone} {phone}. {Thanks|Thank you}, {first}`,
      `{Hello|Hi}, {do you have|is there} {a room|availability|space} for {num} {people|guests} from {date} to {date}? {We are|It's for} {a family trip|a small workshop|my parents' anniversary}. {Best|Kind regards}, {full}`,
      `{Hi|Hello}, {can I|could I} {book|get} {a trial class|an appointment|a session} {next|this} {day}{| morning| evening}? {I'm a beginner|It's my first time|I have a bad knee, is that ok}? {Thanks|Cheers}, {first}`,
      `{Hello|Good afternoon}, we {are planning|want to organise} a {birthday party|team dinner|small wedding reception} for about {big} guests {in|on} {date}. {Could you send|Please send} {your menu and prices|options and a quote}. {Call|My number}: {phone}. {full}`,
    ],
  },
  {
    cls: 'ham',
    kind: 'job',
    templates: [
      `{Dear hiring manager|Hello|Hi}, I {am applying|would like to apply} for the {barista|junior developer|shop assistant|designer|accountant} {position|role} {you posted|on your careers page}. I have {num} years of experience {in {city}|in a similar role}. {My CV is on|You can see my work at} {bizsite}. {Kind regards|Best}, {full}`,
      `{Hi|Hello}, {are you hiring|do you have openings} {for the summer|for weekends|part-time}? {I'm a student|I recently moved to {city}} and {would love to|want to} {work with you|join your team}. {My number|Phone}: {phone}. {Thanks|Thank you}, {first}`,
      `{Hello|Dear team}, {following up on|regarding} my {application|interview} {last week|on {day}} for the {role|position} of {project manager|sales assistant|cook}. {Is there any news|Could you tell me the next steps}? {Best regards|Thanks}, {full}`,
      `{Hi|Hello}, I'm a {freelance photographer|translator|copywriter} {based in {city}|from {city}} and {saw|read} {that you|you} {need|are looking for} {help|someone} {for|with} {your catalogue|the new menu|your event}. {My portfolio|Examples of my work}: {bizsite}. {first}`,
    ],
  },
  {
    cls: 'ham',
    kind: 'feedback',
    templates: [
      `{Just wanted to say|I wanted to say} {thank you|thanks} {for|for the} {lovely evening|great service|quick delivery} {on {day}|last week|yesterday}. {The {product} is perfect|Everything was perfect|We'll be back}! {first}`,
      `{Hi|Hello}, {a small|one} {suggestion|idea}: {could you|please} {add|offer} {gluten-free options|evening classes|a larger size|gift wrapping}? {I|We} {come|order} {every week|often} and {would love it|it would help a lot}. {Thanks|Cheers}, {first}`,
      `{Hello|Hi}, {I noticed|FYI} {a typo|a broken link|an error} on your {contact page|prices page|menu}: {it says|the price shows} {price} {but|while} {the shop|the flyer} says {price}. {Which is right|Just letting you know}. {first}`,
      `{Hi|Hello}, {we met|I met you} at the {market|fair|conference} in {city} {on|last} {day}. {You mentioned|You said} {I could write here|to get in touch} {about|for} {a collaboration|the wholesale prices|a workshop}. {Looking forward to hearing from you|Talk soon}, {full}, {company}`,
    ],
  },
  {
    cls: 'ham',
    kind: 'quote',
    templates: [
      `{Hello|Hi}, {could you send me|I'd like} a quote for {num} {product}s{| for our office| for the new studio}? {Delivery to|We're in} {city}. {Our budget is around|Budget} {price} {each|per piece}. {Thanks|Regards}, {full}, {company}`,
      `{Hi|Hello}, {we need|we are looking for} {a new logo|a website refresh|catering|translation of {big} pages} {for|before} {date}. {What would it cost|Can you give us an estimate}? {Details|More about us}: {bizsite}. {Best|Thanks}, {full}`,
      `{Hello|Good morning}, {do you offer|is there} a discount for {schools|non-profits|groups of {num}}? {We are|I run} {a small charity|a primary school|a running club} in {city}. {You can call me on|Phone} {phone}. {Many thanks|Thank you}, {first}`,
    ],
  },
  // ---------------------------------------------------------------- newsletter-like legitimate messages
  {
    cls: 'newsletter',
    kind: 'announcement',
    templates: [
      `{Spring|Autumn|Summer|Winter} {news|update} from {company}: {we are moving|our new shop opens|we've extended our hours} {on|from} {date}! {Come and see us|Visit us} at {city} {or read more|- details} at {ownurl}. {See you soon|Thanks for your support}! {Unsubscribe|To stop receiving these emails}: {ownurl}`,
      `{Hello friends|Dear members|Hi everyone}, {our|the} {annual meeting|open day|summer party} {is|will be} on {date} at {time}. {Tickets|Entry} {{price}|free for members}. {RSVP|Register} {here|at} {ownurl}. {You receive this because you signed up on our website.|You get this email as a member.} {Unsubscribe|Manage preferences} {ownurl}`,
      `{Big news|Exciting news}: {company} {turns|is} {num} {years old|this month}! {To celebrate|To say thank you}, {everything is|all classes are} {pct} off {until|through} {date}. {Shop|Book} {now|today} at {ownurl}. {Questions? Call us on|Call} {phone}. {Unsubscribe at any time|Reply STOP or unsubscribe}: {ownurl}`,
    ],
  },
  {
    cls: 'newsletter',
    kind: 'launch',
    templates: [
      `{Introducing|Meet|New:} the {product}{| - handmade in {city}}. {Now available|In stock now} for {price}{| with free shipping over {price}}. {Order yours|See it|Shop now}: {ownurl} {Limited stock|Only {big} made}. {Unsubscribe|Update your email preferences}: {ownurl}`,
      `{Our new|The new} {course|workshop series|menu} {starts|launches} {on|this} {date}. {Early bird price|Launch price} {price} {until|before} {date}{|, then {price}}. {Reserve your spot|Sign up} at {ownurl} {and bring a friend for free|- places are limited}. {You can unsubscribe at any time|Not interested? Unsubscribe}: {ownurl}`,
      `{It's here|Finally|Back by popular demand}: {the {product}|our {product}} {in {num} new colours|restocked|with a new design}. {Members get|Subscribers get} {pct} off {this week|until {day}} with code {WELCOME|SPRING|THANKS}{num}. {Browse|Shop} {the collection|now}: {ownurl}\n{ownurl}\n{Unsubscribe|Manage subscription}: {ownurl}`,
    ],
  },
  {
    cls: 'newsletter',
    kind: 'event',
    templates: [
      `{Join us|You're invited} {for|to} {a tasting evening|our book club|a live concert|the charity run} on {day} {date} at {time}. {Free entry|Tickets {price}}, {drinks included|kids welcome}. {Details and tickets|More info}: {ownurl} - {see you there|hope to see you}! {Unsubscribe|Don't want these emails? Unsubscribe}: {ownurl}`,
      `{This month|Coming up} at {company}: {date} - {open studio|workshop|talk}; {date} - {market day|film night|kids' class}; {date} - {members' dinner|late opening}. {Full programme|Calendar}: {ownurl}. {Book early, places are limited|Members book free}. {Unsubscribe|Opt out}: {ownurl}`,
      `{Reminder|Last chance}: {the|our} {workshop|webinar|tour} {is|starts} {tomorrow|on {day}} at {time}. {Join online|Join here|Your link}: {ownurl}. {Can't make it|If you can't come}? {The recording will be on|Watch later at} {ownurl}. {See you|Thanks}! {Unsubscribe|Email preferences}: {ownurl}`,
    ],
  },
  {
    cls: 'newsletter',
    kind: 'sale',
    templates: [
      `{SALE|Summer sale|Winter sale|Black Friday}: {pct} off {everything|all {product}s|selected items} {until|through} {date}! {Free shipping|Free delivery} {over|on orders above} {price}. {Shop now|Don't miss out}: {ownurl} {Unsubscribe|Unsubscribe from our newsletter}: {ownurl}`,
      `{Only {num} days left|Ends {day}|Last call}: {our|the} {seasonal|end of season|anniversary} {offer|sale} - {{product} from {price}|{pct} off gift cards|buy one get one free}. {Shop|See the offers} at {ownurl}. {Questions?|Need help?} {Call us|Phone}: {phone}. {Unsubscribe|Change your preferences}: {ownurl}`,
      `{Thank you for being a customer|As a loyal customer|Because you're on our list}, {here is|enjoy} {pct} off your next order with code {THANKYOU|FRIENDS|VIP}{num}. {Valid until|Expires} {date}. {Use it|Shop} at {ownurl}. {Terms apply.|One use per customer.} {Unsubscribe|Stop these emails}: {ownurl}`,
    ],
  },
  {
    cls: 'newsletter',
    kind: 'digest',
    templates: [
      `{Our|The} {monthly|weekly} {digest|roundup|newsletter}:\n- {New on the blog|Read}: {how we bake our bread|five tips for beginners|behind the scenes} {ownurl}\n- {Recipe of the month|Customer story|Staff pick}: {ownurl}\n- {Upcoming|Next}: {workshop|market} on {date}\n{Unsubscribe|Manage your subscription}: {ownurl}`,
      `{Hello|Hi} from {company}! {This week|This month} {we|our team} {planted {big} trees|finished the new studio|welcomed {num} new members}. {Read the story|Photos}: {ownurl}. {Also|Plus}: {the {product} is back|new opening hours from {date}}. {Thanks for reading|Until next time}! {Unsubscribe|Unsubscribe here}: {ownurl}`,
      `{Issue|No.} {big} - {top stories|in this issue}: {our {city} shop reopens|{product} care guide|a member's {month} trip}. {Read online|Read it in your browser}: {ownurl}. {Forwarded this email|Got this from a friend}? {Subscribe at|Join the list at} {ownurl}. {Unsubscribe|Leave the list}: {ownurl}`,
    ],
  },
];
